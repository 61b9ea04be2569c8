# The fptrack image: one image for the worker, beat, the admin (web) and the crawler;
# docker-compose.yml picks the command. Build: docker compose build
FROM python:3.11-slim

# No .pyc files in the image, logs reach `docker compose logs` at once, and no pip
# cache or version check (they only make the image bigger and the build noisier).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src

# The dependencies first, read from pyproject.toml alone: this layer is reused until
# they change, so a change to the code rebuilds in seconds. Only the runtime
# dependencies: the test and bench extras stay out of the image.
COPY pyproject.toml ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; \
print('\n'.join(deps))" > /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The Debian packages the crawler needs at run time (chromium, which renders pages
# whose text a script writes), from the same list the scripts install from; the
# package lists are dropped after, so they do not weigh on the image.
COPY scripts/system-deps scripts/system-packages ./scripts/
RUN FPT_SYSTEM_DEPS_STRICT=1 FPT_SYSTEM_DEPS_LOG=/tmp/system-deps.log scripts/system-deps crawl \
    && rm -rf /var/lib/apt/lists/* /tmp/system-deps.log
ENV FPT_CHROMIUM=/usr/bin/chromium

# The project itself (.dockerignore lets in only pyproject.toml, README.md, the
# packages and the system package list). `pip check` fails the build if the installed set is inconsistent.
COPY . .
RUN pip install --no-cache-dir . \
    && pip check \
    && rm -rf build *.egg-info

# Run as an unprivileged user. /data is FPT_HOME: the beat schedule, the admin's
# session key file when FPT_SECRET_KEY is unset, and crawl job folders. A named
# volume mounted there starts with this ownership. The home folder is writable
# because Scrapy's domain suffix list (tldextract) is cached under ~/.cache.
RUN useradd --uid 1000 --user-group --create-home --shell /usr/sbin/nologin fptrack \
    && mkdir -p /data \
    && chown fptrack:fptrack /data
ENV FPT_HOME=/data
USER fptrack
WORKDIR /home/fptrack

# The admin listens here with `fptrack web --host 0.0.0.0 --port 8000`.
EXPOSE 8000
CMD ["fptrack", "--help"]

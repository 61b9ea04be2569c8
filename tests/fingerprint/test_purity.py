import pkgutil
import subprocess
import sys

import fingerprint

FORBIDDEN = ("redis", "pymongo", "scrapy", "celery", "flask", "requests", "urllib3", "sqlite3", "click", "lxml",
             "trafilatura", "rapidocr_onnxruntime", "pytesseract", "cv2")


def test_importing_every_engine_module_loads_no_io_framework():
    names = [m.name for m in pkgutil.walk_packages(fingerprint.__path__, "fingerprint.")]
    assert "fingerprint.track" in names and "fingerprint.translation.align" in names
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}: importlib.import_module(n)\n"
        f"print(','.join(sorted(m for m in {FORBIDDEN!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

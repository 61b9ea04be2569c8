"""Images in the tracker: a work's covers are registered with it, images found on pages are
stored, processed into matches of the registered images they copy, and nothing else matches."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.images import cover, encode, transforms
from clikit.plural import counted
from fptrack.cli import main
from tracker.context import Context
from tracker.media.images import MAX_IMAGE_BYTES, register_image
from tracker.pipeline import ingest, process_queued_images
from tracker.registry import register_work
from tracker.settings import Settings
from tracker.store import PageImage
from tracker.workers import tasks
from tracker.workers.app import create_celery

from .conftest import SAMPLES

#: Transformations asserted one by one (the hardest, resize + JPEG + watermark together, is measured
#: in bench/images.py rather than asserted per cover).
ASSERTED = ("resized to half", "JPEG quality 30", "cropped 4% on one side", "cropped 4% on every side",
            "text watermark", "colours shifted", "contrast raised")


@pytest.fixture(scope="module")
def art(tmp_path_factory):
    """Two covers, their transformed copies, a look-alike of the first and an unrelated cover."""
    rng = random.Random(7)
    folder = tmp_path_factory.mktemp("art")
    covers, copies = {}, {}
    for name in ("front", "map"):
        img, palette = cover(rng)
        covers[name] = encode(img)
        for kind, t in transforms(img, rng).items():
            if kind in ASSERTED:
                copies[f"{name}-{kind.replace(' ', '_').replace('%', 'pc')}"] = (encode(t, "JPEG", quality=85), name)
        if name == "front":
            look, _ = cover(rng, palette=palette)
    other, _ = cover(rng)
    negatives = {"look-alike": encode(look), "other": encode(other)}
    return folder, covers, copies, negatives


def write(folder: Path, files: dict[str, bytes], suffix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / f"{name}{suffix}").write_bytes(data)
    return folder


def test_covers_in_the_work_folder_and_given_apart_are_registered(ctx, tmp_path, art):
    _, covers, _, _ = art
    originals = tmp_path / "originals"
    originals.mkdir()
    for f in (SAMPLES / "originals").iterdir():
        (originals / f.name).write_bytes(f.read_bytes())
    (originals / "front.png").write_bytes(covers["front"])  # an image beside the chapters: not a chapter
    extra = write(tmp_path / "extra", {"map": covers["map"]}, ".png")
    report = register_work(ctx, "山城旧事", originals, images=[extra / "map.png"])
    assert len(report.added) == len(list((SAMPLES / "originals").iterdir()))
    assert sorted(report.images.added) == ["山城旧事/front.png", "山城旧事/map.png"]
    assert not report.skipped.skipped  # the image in the folder is not reported as a skipped text
    assert {i.key for i in ctx.store.work_images("山城旧事")} == {"山城旧事/front.png", "山城旧事/map.png"}
    again = register_work(ctx, "山城旧事", originals, images=[extra / "map.png"])
    assert sorted(again.images.unchanged) == ["山城旧事/front.png", "山城旧事/map.png"] and not again.images.added
    assert len(ctx.image_index) == 2


def test_every_copy_is_found_and_no_look_alike(ctx, tmp_path, art):
    _, covers, copies, negatives = art
    for name, data in covers.items():
        register_image(ctx, "山城旧事", f"{name}.png", data)
    pages = tmp_path / "pages"
    write(pages, {k: v for k, (v, _) in copies.items()}, ".jpg")
    write(pages, negatives, ".png")
    (pages / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)  # an image in name only
    report = ingest(ctx, [str(pages)], site="pirate")
    assert len(report.images) == len(copies) + len(negatives) + 1 and not report.queued
    counts = process_queued_images(ctx)
    assert counts == {"done": len(copies) + len(negatives), "failed": 1, "matches": len(copies),
                      "pictures read": 0, "picture matches": 0}
    found = {m.image: m.work_image for m in ctx.store.image_matches()}
    assert found == {f"{k}.jpg": f"山城旧事/{name}.png" for k, (_, name) in copies.items()}
    assert all(m.site == "pirate" and m.work == "山城旧事" for m in ctx.store.image_matches())
    broken = ctx.store.get_page_image("broken.png")
    assert broken.status == "failed" and "not in an image format that can be read" in broken.reason
    done = ctx.store.get_page_image("look-alike.png")
    assert done.status == "done" and len(done.fingerprint["colours"]) == 64
    # Ingested again: nothing new to process, no match twice.
    assert not ingest(ctx, [str(pages)], site="pirate").images
    assert ctx.store.count_image_matches() == len(copies)


def test_a_new_image_copy_is_a_notification_event_once(ctx, art):
    from tracker.followup.notify import subscribe
    from tracker.media.images import process_image

    _, covers, copies, _ = art
    register_image(ctx, "山城旧事", "front.png", covers["front"])
    sub = subscribe(ctx.store, "email", "rights@example.com", site="pirate")
    data = next(d for d, name in copies.values() if name == "front")
    url = "https://img.pirate.example/c/1.jpg"
    ctx.store.upsert_page_image(PageImage(key=url, url=url, site="pirate", found_on="https://pirate.example/1",
                                          data=data))
    assert len(process_image(ctx, url).matches) == 1
    [e] = ctx.store.events(kind="new-match")
    assert (e.work, e.site, e.page, e.chapter) == ("山城旧事", "pirate", "https://pirate.example/1", "山城旧事/front.png")
    assert e.data["image"] == url and e.routed and "new copy of the image 山城旧事/front.png on pirate" in e.summary
    assert [(d.event, d.subscription) for d in ctx.store.deliveries(status="pending")] == [(e.id, sub.id)]
    process_image(ctx, url)  # found again: the same match, no second event
    assert len(ctx.store.events()) == 1


def test_a_bad_cover_is_skipped_with_its_reason_and_the_rest_registered(ctx, tmp_path, art):
    _, covers, _, _ = art
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "第一章.txt").write_text((SAMPLES / "originals").glob("*.txt").__next__().read_text("utf-8"), "utf-8")
    (folder / "cover.jpg").write_bytes(b"GIF89a not really")
    (folder / "huge.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * (MAX_IMAGE_BYTES + 1))
    (folder / "good.png").write_bytes(covers["front"])
    report = register_work(ctx, "W", folder)
    assert report.added == ["W/第一章"] and report.images.added == ["W/good.png"]
    reasons = dict(report.images.skipped)
    assert "not in an image format that can be read" in reasons[str(folder / "cover.jpg")]
    assert "over the 8 MiB" in reasons[str(folder / "huge.png")]


def test_a_process_sees_images_another_process_registered(tmp_path, art):
    """A worker's image index follows registrations made elsewhere (a count per task)."""
    _, covers, copies, _ = art
    settings = Settings.load({"FPT_HOME": str(tmp_path / "home")})
    app = create_celery(settings, task_always_eager=True)
    try:
        worker = tasks.context(app)
        assert len(worker.image_index) == 0  # loaded, empty
        other = Context(settings)
        register_image(other, "山城旧事", "front.png", covers["front"])
        data, _ = next(v for k, v in copies.items() if v[1] == "front")
        other.store.upsert_page_image(PageImage(key="https://x/1.jpg", url="https://x/1.jpg", site="x",
                                                found_on="https://x/book", data=data))
        result = app.tasks["tracker.tasks.process_image"].apply_async(("https://x/1.jpg",)).get()
        # A cover holds no rows of text: judged so (tracker.media.pictures), never read by OCR.
        assert result == {"image": "https://x/1.jpg", "status": "done", "matches": 1, "reason": "",
                          "picture": "no text"}
        m = worker.store.get_image_match("https://x/1.jpg", "山城旧事/front.png")
        assert m.found_on == "https://x/book" and m.distance <= 12
        other.close()
    finally:
        tasks.use_context(app, None)


def test_the_cli_registers_covers_lists_image_matches_and_reviews_them(tmp_path, art):
    _, covers, copies, negatives = art
    env = {"FPT_HOME": str(tmp_path / "home"), "FPT_MONGO_URL": "", "FPT_REDIS_URL": "", "FPT_BROKER_URL": ""}
    art_dir = write(tmp_path / "art", {"front": covers["front"]}, ".png")
    runner = CliRunner()

    def run(*args):
        r = runner.invoke(main, [str(a) for a in args], env=env)
        assert "Traceback" not in r.output, r.output
        return r

    r = run("add-work", "山城旧事", SAMPLES / "originals", "--cover", art_dir / "front.png")
    assert r.exit_code == 0 and "1 image (1 new" in r.output
    r = run("add-work", "山城旧事", "--cover", art_dir)  # images only: the chapters stay
    assert r.exit_code == 0 and "0 chapters" in r.output and "1 unchanged)" in r.output
    pages = tmp_path / "pages"
    front = {k: v for k, (v, n) in copies.items() if n == "front"}
    write(pages, front, ".jpg")
    write(pages, negatives, ".png")
    r = run("ingest", pages, "--site", "pirate")
    done = len(front) + len(negatives)
    assert r.exit_code == 0 and f"{counted(done, 'image')} done, 0 failed, {counted(len(front), 'image match')}" in r.output
    r = run("matches", "--images", "--format", "jsonl")
    rows = [json.loads(line) for line in r.output.splitlines()]
    assert sorted(row["image"] for row in rows) == sorted(f"{k}.jpg" for k in front)
    assert {row["original"] for row in rows} == {"山城旧事/front.png"}
    first = rows[0]
    r = run("set-status", first["image"], first["original"], "takedown-sent", "--by", "ann")
    assert r.exit_code == 0 and "takedown-sent" in r.output
    r = run("matches", "--images", "--status", "takedown-sent", "--format", "csv")
    assert first["image"] in r.output and r.output.count("\n") == 2
    r = run("set-status", "nothing.jpg", "山城旧事/front.png", "confirmed")
    assert r.exit_code == 1 and "no match of 'nothing.jpg'" in r.output
    r = run("add-work", "山城旧事")
    assert r.exit_code == 1 and "--cover" in r.output
    r = run("stats")
    assert "images   registered 1" in r.output and "image matches  new" in r.output


def test_the_daily_run_processes_images_left_queued(tmp_path, art):
    _, covers, copies, _ = art
    settings = Settings.load({"FPT_HOME": str(tmp_path / "home")})
    app = create_celery(settings, task_always_eager=True)
    try:
        ctx = tasks.context(app)
        register_image(ctx, "山城旧事", "front.png", covers["front"])
        pages = write(tmp_path / "pages", {k: v for k, (v, n) in copies.items() if n == "front"}, ".jpg")
        queued = ingest(ctx, [str(pages)], site="pirate").images  # stored, not processed (as with --no-process)
        assert queued and ctx.store.count_image_matches() == 0
        summary = app.tasks["tracker.tasks.daily"].apply_async().get()
        assert summary["images"] == len(queued)
        assert ctx.store.count_image_matches() == len(queued)
        assert not ctx.store.page_images(status="queued")
    finally:
        tasks.use_context(app, None)

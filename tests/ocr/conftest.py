"""Fixtures of the OCR tests: the fonts the renderer draws with, and the engines.

A missing font or engine skips with the command that installs it, and fails instead
under FPT_REQUIRE_SERVICES=1 (scripts/system-deps test and the project's dependencies
install all of them, so CI has them)."""
from __future__ import annotations

import pytest

from ..conftest import need

# A paragraph of plain modern prose (written for these tests), long enough for a few lines.
PARAGRAPH = (
    "天快亮的时候，雨终于停了。他推开窗户，看见院子里的石榴树被风吹断了一根枝条，"
    "几只麻雀在湿漉漉的地上跳来跳去。母亲已经在厨房里忙了很久，锅里的粥冒着热气，"
    "她说今天要早点出门，去镇上把那封信寄出去，免得又耽误一个月。\n"
    "他答应了一声，却没有动。桌上摊着昨晚没写完的稿子，最后一行只写了半句话，"
    "墨迹还没有干透。他想起老师说过的话：写东西的人，最怕的不是没有故事，"
    "而是不肯把故事讲完。"
)


@pytest.fixture(scope="session")
def fonts() -> tuple[str, ...]:
    from bench.pictures.render import FONT_FILES, available_fonts

    found = available_fonts()
    packages = " ".join(sorted({pkg for *_, pkg in FONT_FILES}))
    need(bool(found), f"no Chinese font installed for the renderer; run scripts/system-deps test "
                      f"(sudo apt-get install -y {packages})")
    return found


def _engine(name: str):
    from ocr.engines import EngineMissing, make_engine

    try:
        return make_engine(name, threads=1)
    except EngineMissing as e:
        need(False, f"the {name} OCR engine is not installed: {e}")


@pytest.fixture(scope="session")
def rapidocr():
    """The chosen engine (docs/ocr.md), loaded once for the session."""
    return _engine("rapidocr")


@pytest.fixture(scope="session")
def tesseract():
    return _engine("tesseract")

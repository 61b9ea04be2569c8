import numpy as np
import pytest

from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.initials import InitialsParams, fingerprint, profile_codes, shared_share
from fingerprint.normalize import normalize
from fingerprint.pinyin import to_sounds

STORY = (
    "陈守义坐在茶馆靠窗的位置手里捧着一杯早已凉透的粗茶眼睛却一直望着对面那条通往码头的窄巷"
    "他在这里已经等了三天三天前一封没有署名的信被人塞进了他家的门缝信上只写着一句话"
    "字迹潦草墨色却很新显然是匆忙之间写成的陈守义把信反复看了十几遍终于决定来赴这个莫名其妙的约"
)
OTHER = (
    "为期三天的秋季农产品交易会于昨日下午在市会展中心闭幕据组委会介绍本届交易会共吸引了来自全省"
    "各地的三百余家企业和合作社参展展出的产品涵盖粮油果蔬茶叶干货畜禽等多个门类现场签约金额比去年"
    "同期增长了两成以上在茶叶展区来自山区的几家合作社带来了今年新采的高山绿茶吸引了不少采购商"
)


def fp(text, **kw):
    return fingerprint(to_sounds(normalize(text)).initials, InitialsParams(**kw))


def test_windows_survive_a_shifted_start_homophones_and_script():
    orig = fp(STORY)
    assert len(orig.codes) >= 3
    assert shared_share(orig, fp("本站首发，欢迎阅读。" + STORY)) == 1.0
    assert shared_share(orig, fp(STORY.replace("同", "童").replace("信", "心"))) > 0.6
    assert shared_share(orig, fp("陳守義坐在茶館靠窗的位置" + STORY[12:])) == 1.0


def test_unrelated_text_shares_no_windows():
    assert shared_share(fp(STORY), fp(OTHER)) == 0.0


def test_text_shorter_than_a_granule_has_no_windows():
    assert len(fp("短短一句话").codes) == 0


def test_profile_code_packs_one_digit_per_letter():
    p = InitialsParams(granule=32, levels=4)
    counts = np.zeros((1, 26))
    code_none = int(profile_codes(counts, p)[0])
    counts[0, 25] = 32  # all initials z: far above expectation -> top level for z
    code_z = int(profile_codes(counts, p)[0])
    assert (code_z // 4**25) % 4 == 3
    assert code_none != code_z and code_z < 4**26


def test_parameters_are_checked_and_recorded():
    with pytest.raises(ParameterError, match="granule"):
        InitialsParams(granule=2)
    with pytest.raises(IncompatibleFingerprints):
        shared_share(fp(STORY), fp(STORY, granule=16))

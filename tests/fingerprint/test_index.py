import pytest

from fingerprint.index import MemoryIndex

from .index_contract import IndexContract, SampledIndexContract


@pytest.fixture
def make_index():
    return lambda config, params: MemoryIndex(config, params)


class TestMemoryIndex(IndexContract):
    pass


class TestSampledMemoryIndex(SampledIndexContract):
    pass

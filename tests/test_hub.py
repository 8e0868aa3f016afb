"""torch.hub's checkpoint cache (load_state_dict_from_url, utils.model_zoo.load_url) and
torch.nn.modules.utils' state-dict prefix helper, against PyTorch."""
import collections
import hashlib

import pytest

import hookgrad
from hookgrad import hub
from hookgrad.nn.modules.utils import _pair, consume_prefix_in_state_dict_if_present
from hookgrad.utils import model_zoo
from tests.differential import same_as_torch


def _saved(tmp_path, name):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    path = src / name
    hookgrad.save({"w": hookgrad.arange(3.0)}, str(path))
    return path


def test_load_state_dict_from_url_downloads_once_into_the_cache(tmp_path):
    path = _saved(tmp_path, "weights.pth")
    cache = tmp_path / "cache"
    sd = hub.load_state_dict_from_url(path.as_uri(), model_dir=str(cache))
    assert sd["w"].tolist() == [0.0, 1.0, 2.0] and (cache / "weights.pth").exists()
    path.unlink()  # the second call reads the cached file
    assert model_zoo.load_url(path.as_uri(), model_dir=str(cache))["w"].tolist() == [0, 1, 2]


def test_check_hash_compares_the_file_names_prefix(tmp_path):
    path = _saved(tmp_path, "w.pth")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    good = path.rename(path.with_name(f"w-{digest[:8]}.pth"))
    sd = hub.load_state_dict_from_url(good.as_uri(), model_dir=str(tmp_path / "c"),
                                      check_hash=True)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
    bad = good.rename(good.with_name("w-00000000.pth"))
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "00000000"'):
        hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(tmp_path / "c"),
                                     check_hash=True)
    assert not (tmp_path / "c" / "w-00000000.pth").exists()


def test_get_dir_follows_torch_home(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert hub.get_dir() == str(tmp_path / "hub")
    with pytest.raises(NotImplementedError, match="hookgrad does not implement torch.hub.load"):
        hub.load("pytorch/vision", "resnet18")


def test_consume_prefix_matches_torch():
    def f(L):
        from importlib import import_module
        consume = import_module(L.__name__ + ".nn.modules.utils")
        sd = collections.OrderedDict([("module.a", 1), ("module.b.c", 2), ("x", 3)])
        sd._metadata = {"": {"v": 1}, "module": {"v": 2}, "module.b": {"v": 3}}
        consume.consume_prefix_in_state_dict_if_present(sd, "module.")
        return [list(sd.items()), sd._metadata, list(consume._pair(3)),
                list(consume._quadruple((1, 2, 3, 4)))]
    same_as_torch(f)
    assert consume_prefix_in_state_dict_if_present and _pair(2) == (2, 2)

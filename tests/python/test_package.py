"""The package itself: its plugins found beside the module, its stubs, devices()."""

import os

import ampx


def test_plugins_are_the_packages_own():
    listing = ampx.plugins()
    package_plugins = os.path.join(os.path.dirname(ampx._ampx.__file__), "plugins")
    assert os.path.isdir(package_plugins)
    assert os.path.realpath(package_plugins) in [os.path.realpath(d) for d in listing["search_dirs"]]
    loaded = {p["name"]: p["file"] for p in listing["plugins"]}
    assert "cpu_ref" in loaded, listing
    # Every in-tree plugin is loaded from the package, the reference one too
    # (it is refused outside ampx's own directories).
    for name, path in loaded.items():
        assert os.path.dirname(os.path.realpath(path)) == os.path.realpath(package_plugins), name


def test_devices():
    devs = ampx.devices()
    ids = [d.id for d in devs]
    assert "cpu_ref:0" in ids
    ref = devs[ids.index("cpu_ref:0")]
    assert ref.kind == "cpu" and ref.plugin == "cpu_ref" and ref.fingerprint


def test_stubs_ship():
    here = os.path.dirname(ampx._ampx.__file__)
    stub = os.path.join(here, "_ampx.pyi")
    assert os.path.isfile(stub)
    text = open(stub).read()
    for name in ("class Session", "class Plan", "class CompiledModel", "def list_devices"):
        assert name in text
    assert os.path.isfile(os.path.join(here, "py.typed"))

"""The classroom kit's docker part: an image saved into the bundle is loaded again on a laptop."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import uuid

import pytest

from eoslab.course import load_docker_images
from eoslab.course._workshop import save_docker_images
from eoslab.errors import EoslabError

pytestmark = [pytest.mark.docker]


def _engine() -> str:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker command: the bundle's docker part needs Docker")
    if subprocess.run([docker, "info"], capture_output=True, timeout=20).returncode != 0:
        pytest.skip("no Docker engine answers: the bundle's docker part needs one")
    return docker


def test_an_image_saved_into_the_bundle_loads_again(tmp_path):
    docker = _engine()
    image = f"eoslab-bundle-test:{uuid.uuid4().hex[:8]}"
    layer = tmp_path / "layer.tar"
    (tmp_path / "hello.txt").write_text("an image with one file, built here (no registry needed)\n")
    with tarfile.open(layer, "w") as tar:
        tar.add(tmp_path / "hello.txt", arcname="hello.txt")
    subprocess.run([docker, "import", str(layer), image], check=True, capture_output=True)
    try:
        offline = tmp_path / ".offline"
        assert save_docker_images([image], offline / "docker") == [image]
        subprocess.run([docker, "rmi", image], check=True, capture_output=True)  # the laptop has no image yet
        assert load_docker_images(offline, docker) == [next((offline / "docker").glob("*.tar")).name]
        assert subprocess.run([docker, "image", "inspect", image], capture_output=True).returncode == 0
    finally:
        subprocess.run([docker, "rmi", "-f", image], capture_output=True)


def test_an_image_that_does_not_exist_is_one_sentence(tmp_path):
    _engine()
    with pytest.raises(EoslabError, match="build or pull the image first"):
        save_docker_images([f"eoslab-no-such-image:{uuid.uuid4().hex[:8]}"], tmp_path)
    assert load_docker_images(tmp_path) == []  # no .offline/docker: nothing to load

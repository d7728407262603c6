"""``eoslab image build|ensure``: the docker backend's Kafka image, built here or made sure of (`make test`).

The subcommand's parser sits beside its handler; ``PARSERS`` hands it to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse

from eoslab.cli._common import Registrar, Subparsers


def _build(force: bool, lab: bool) -> int:
    from eoslab import _image, _lab_image

    r = _lab_image.build_lab_image(force=force) if lab else _image.build_image(force=force)
    how = "up to date" if r.cached else "built"
    base = f"; base image {r.base_seconds:.0f} s" if r.base_seconds is not None else ""
    print(f"{r.image}: {how} in {r.seconds:.1f} s{base}.")
    return 0


def _ensure_lab() -> int:
    """The lab image (the `lab` service of docker-compose.yml), built here from the context's wheels and jars."""
    from eoslab import _lab_image
    from eoslab.cluster import docker_available

    if (why := docker_available()) is not None:
        print(f"eoslab: the lab image cannot be built here ({why}); the lab container's test skips.")
        return 0
    r = _lab_image.build_lab_image()
    print(f"Lab image: {r.image} ({'up to date' if r.cached else 'built'} in {r.seconds:.0f} s).")
    return 0


def _ensure() -> int:
    """What `make test` calls before the docker tests: an image here, pulled or built, or why there can be none."""
    from eoslab import _image
    from eoslab.cluster import docker_available

    if (why := docker_available()) is not None:
        print(f"eoslab: the docker backend cannot run here ({why}); the docker tests skip.")
        return 0
    image = _image.kafka_image()
    if image != _image.LOCAL_IMAGE and _image.image_exists(image):
        print(f"Kafka image for the docker backend: {image}.")
        return 0  # the local image is never taken as it is: built again when its inputs changed (cached by them)
    if image != _image.LOCAL_IMAGE and _image.pull(image):
        print(f"Kafka image for the docker backend: {image} (pulled).")
        return 0
    r = _image.build_image()
    print(
        f"Kafka image for the docker backend: {r.image} ({'up to date' if r.cached else 'built'} in {r.seconds:.0f} s)."
    )
    return 0


def cmd_image(args: argparse.Namespace) -> int:
    """The Kafka image of the docker backend: build the local one, or make sure one is here (make test)."""
    if args.what == "build":
        return _build(args.force, args.lab)
    return _ensure_lab() if args.lab else _ensure()


def _image_parser(sub: Subparsers) -> None:
    s = sub.add_parser("image", help="the docker backend's Kafka image: build the local one (no registry needed)")
    s.add_argument("what", choices=["build", "ensure"], help="build: eoslab/kafka (cached); ensure: one is here")
    s.add_argument("--force", action="store_true", help="build: rebuild from scratch (no cache)")
    s.add_argument(
        "--lab",
        action="store_true",
        help="the lab image instead (JupyterLab, JDK, the kit: the `lab` service, docker compose --profile lab)",
    )
    s.set_defaults(func=cmd_image)


PARSERS: dict[str, Registrar] = {"image": _image_parser}
"""The subcommand's name and the function that adds its parser."""

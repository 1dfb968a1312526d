"""Package list for the picaemu.formats / picaemu.gui mapping (pyproject.toml holds everything else)."""

from setuptools import find_packages, setup


def _mapped(name: str, where: str) -> list[str]:
    return [name] + [f"{name}.{sub}" for sub in find_packages(where)]


setup(packages=_mapped("picaemu", "picaemu") + _mapped("picaemu.formats", "formats") + _mapped("picaemu.gui", "gui"))

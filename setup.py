"""Build glue that pyproject.toml cannot express: ship ``resources/`` inside the package.

In a checkout, ``resources/`` sits next to ``curator/``; an installed wheel carries it as
``curator/resources`` (the package ``curator.resources`` mapped onto the ``resources`` folder),
which is where :func:`curator.paths.resources_dir` looks. Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, find_packages, setup

# Folders of resources/ with importable names (icons/, ...) must be declared as data packages,
# or setuptools warns; folders like demo-wiki/ are plain data below curator.resources.
RESOURCE_PACKAGES = [
    "curator.resources",
    *(f"curator.resources.{name}" for name in find_namespace_packages(where="resources")),
]
# `**/*` skips dot-files and dot-folders, so a local .curator/ cache never ships.
RESOURCE_DATA = {name: ["**/*"] for name in RESOURCE_PACKAGES}
RESOURCE_DATA["curator.resources"] += ["demo-wiki/.scope.toml", "demo-wiki/.gitignore"]

setup(
    packages=[*find_packages(include=["curator", "curator.*"]), *RESOURCE_PACKAGES],
    package_dir={"curator.resources": "resources"},
    package_data={"curator": ["py.typed"], **RESOURCE_DATA},
)

"""Each area of the admin (a package of web/) hands the app its blueprints: every blueprint
defined anywhere in web/ is registered once, by the area whose package holds it."""
from __future__ import annotations

import importlib
import pkgutil

from flask import Blueprint

import web

AREAS = ("auth", "reports", "review", "evidence", "manage", "api", "tenancy")


def defined_blueprints() -> dict[str, str]:
    """Blueprint name -> the module defining it, over every module of web/ (the demo aside)."""
    found = {}
    for info in pkgutil.walk_packages(web.__path__, "web."):
        if info.name.startswith("web.demo"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Blueprint) and value.import_name == info.name:
                found[value.name] = info.name
    return found


def test_every_blueprint_is_registered_once_by_its_area(app):
    defined = defined_blueprints()
    assert set(app.blueprints) == set(defined), "a blueprint defined in web/ but not registered, or the reverse"
    for area in AREAS:
        package = importlib.import_module(f"web.{area}")
        for blueprint in package.blueprints():
            assert defined[blueprint.name].startswith(f"web.{area}."), (blueprint.name, area)
    outside = {name for name, module in defined.items() if not module.startswith(tuple(f"web.{a}." for a in AREAS))}
    assert outside == {"search"}  # the one blueprint at the top of web/: search across works, sites and URLs


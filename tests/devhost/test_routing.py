"""Route templates and route selection (werkzeug.routing under the Functions host's rules for the forms
apps use: case-insensitive literals, `{name}`, a last `{*name}`)."""

from __future__ import annotations

import pytest

from devhost.routing import MethodMismatch, RouteMatch, Router


def values(template: str, path: str) -> dict[str, str] | None:
    match = Router("api", [(template, None, "target")]).resolve("GET", f"/api{path}")
    return match.values if isinstance(match, RouteMatch) else None


@pytest.mark.parametrize(
    ("template", "path", "expected"),
    [
        ("items", "/items", {}),
        ("items", "/ITEMS", {}),
        ("items", "/items/", {}),
        ("items", "/items?x=/y", {}),
        ("items", "/items/1", None),
        ("items", "/itemsx", None),
        ("items/{id}", "/items/42", {"id": "42"}),
        ("items/{id}", "/items", None),
        ("items/{id}", "/items//", None),
        ("items/{id}", "/items/a%20b", {"id": "a b"}),
        ("items/{id}", "/items/a%2Fb", {"id": "a/b"}),
        ("Microsoft.Scheduler/{name}", "/microsoft.scheduler/Job", {"name": "Job"}),
        ("Microsoft.Scheduler/{name}", "/microsoftXscheduler/Job", None),
        ("files/{*path}", "/files/a/b%20c/d.txt", {"path": "a/b c/d.txt"}),
        ("files/{*path}", "/files", {}),
        ("files/{**path}", "/files/x/y", {"path": "x/y"}),
        ("{*all}", "/", {}),
        ("{*all}", "/anything/at/all", {"all": "anything/at/all"}),
        ("/leading/and/trailing/", "/leading/and/trailing", {}),
    ],
)
def test_template_matching(template: str, path: str, expected: dict[str, str] | None) -> None:
    assert values(template, path) == expected


@pytest.mark.parametrize(
    "template",
    [
        "items/{id",
        "items/id}",
        "{*rest}/more",
        "items/{id:int}",
        "items/{id?}",
        "items/{id=first}",
        "docs/{name}.{ext}",
        "v{version}/items",
    ],
)
def test_templates_beyond_the_supported_forms_are_refused(template: str) -> None:
    with pytest.raises(ValueError, match="not supported by the local host"):
        Router("api", [(template, None, "target")])


def test_literal_routes_win_over_parameters_regardless_of_order() -> None:
    router = Router(
        "api",
        [
            ("{*all}", None, "catch-all"),
            ("items/{id}", None, "param"),
            ("items/special", None, "literal"),
            ("items/{id}/{*rest}", None, "param-rest"),
        ],
    )

    def target(path: str) -> str:
        match = router.resolve("GET", path)
        assert isinstance(match, RouteMatch)
        return match.target

    assert target("/api/items/special") == "literal"
    assert target("/api/Items/SPECIAL") == "literal"
    assert target("/api/items/seven") == "param"
    assert target("/api/items/seven/a/b") == "param-rest"
    assert target("/api/other/thing") == "catch-all"


def test_prefix_is_required_and_case_insensitive() -> None:
    router = Router("api/v1", [("items", None, "items")])
    assert isinstance(router.resolve("GET", "/API/V1/items"), RouteMatch)
    assert router.resolve("GET", "/items") is None
    assert router.resolve("GET", "/api/items") is None


def test_empty_prefix_serves_from_the_root() -> None:
    assert isinstance(Router("", [("items", None, "items")]).resolve("GET", "/items"), RouteMatch)


def test_methods_filter_and_mismatch_report() -> None:
    router = Router("api", [("items", ["post", "PUT"], "write"), ("items/{id}", None, "any")])
    assert isinstance(router.resolve("PUT", "/api/items"), RouteMatch)
    assert router.resolve("GET", "/api/items") == MethodMismatch(("POST", "PUT"))
    assert isinstance(router.resolve("DELETE", "/api/items/3"), RouteMatch)


def test_method_mismatch_falls_through_to_a_less_specific_route() -> None:
    router = Router(
        "api",
        [
            ("items/special", ["POST"], "literal-post"),
            ("items/{id}", ["GET"], "param-get"),
            ("console", ["GET"], "home"),
            ("console/{*path}", ["GET", "POST"], "page"),
        ],
    )
    match = router.resolve("GET", "/api/items/special")
    assert isinstance(match, RouteMatch)
    assert (match.target, match.values) == ("param-get", {"id": "special"})
    assert router.resolve("GET", "/api/console") == RouteMatch("home", {})
    assert router.resolve("POST", "/api/console") == RouteMatch("page", {})

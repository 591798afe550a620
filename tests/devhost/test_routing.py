"""Route templates and route selection, as the Functions host (ASP.NET Core routing) does them."""

from __future__ import annotations

import pytest

from devhost.routing import MethodMismatch, RouteMatch, Router, RouteTemplate, split_path


def values(template: str, path: str) -> dict[str, str] | None:
    return RouteTemplate.parse(template).match(split_path(path))


@pytest.mark.parametrize(
    ("template", "path", "expected"),
    [
        ("items", "/items", {}),
        ("items", "/ITEMS", {}),
        ("items", "/items/", {}),
        ("items", "/items/1", None),
        ("items/{id}", "/items/42", {"id": "42"}),
        ("items/{id}", "/items", None),
        ("items/{id}", "/items/a%20b", {"id": "a b"}),
        ("items/{id?}", "/items", {}),
        ("items/{id?}", "/items/7", {"id": "7"}),
        ("items/{id=first}", "/items", {"id": "first"}),
        ("items/{id:int}", "/items/-12", {"id": "-12"}),
        ("items/{id:int}", "/items/12x", None),
        ("items/{id:int}", "/items/99999999999", None),
        ("items/{id:long}", "/items/99999999999", {"id": "99999999999"}),
        ("items/{id:int:min(1)}", "/items/0", None),
        ("items/{id:int:range(1,5)}", "/items/5", {"id": "5"}),
        ("items/{id:int?}", "/items", {}),
        ("n/{name:alpha}", "/n/Bob", {"name": "Bob"}),
        ("n/{name:alpha}", "/n/b0b", None),
        ("n/{name:length(2,3)}", "/n/abcd", None),
        ("n/{name:maxlength(3)}", "/n/abc", {"name": "abc"}),
        ("g/{id:guid}", "/g/6f9619ff-8b86-d011-b42d-00cf4fc964ff", {"id": "6f9619ff-8b86-d011-b42d-00cf4fc964ff"}),
        ("g/{id:guid}", "/g/nope", None),
        ("b/{flag:bool}", "/b/TRUE", {"flag": "TRUE"}),
        ("c/{code:regex(^[a-z]{{2}}\\d$)}", "/c/ab1", {"code": "ab1"}),
        ("c/{code:regex(^[a-z]{{2}}\\d$)}", "/c/abc", None),
        ("c/{code:regex(^(a|b)$)}", "/c/b", {"code": "b"}),
        ("u/{x:somethingunknown}", "/u/anything", {"x": "anything"}),
        ("files/{*path}", "/files/a/b%20c/d.txt", {"path": "a/b c/d.txt"}),
        ("files/{*path}", "/files", {}),
        ("files/{**path}", "/files/x/y", {"path": "x/y"}),
        ("{*all}", "/", {}),
        ("{*all}", "/anything/at/all", {"all": "anything/at/all"}),
        ("docs/{name}.{ext}", "/docs/report.final.pdf", {"name": "report.final", "ext": "pdf"}),
        ("docs/{name}.{ext?}", "/docs/readme", {"name": "readme"}),
        ("v{version:int}/items", "/V2/items", {"version": "2"}),
        ("/leading/and/trailing/", "/leading/and/trailing", {}),
    ],
)
def test_template_matching(template: str, path: str, expected: dict[str, str] | None) -> None:
    assert values(template, path) == expected


@pytest.mark.parametrize("template", ["items/{id", "items/id}", "{*rest}/more", "items/{id:int(}"])
def test_malformed_templates_are_rejected(template: str) -> None:
    with pytest.raises(ValueError):
        RouteTemplate.parse(template)


def test_split_path_drops_query_and_trailing_slash() -> None:
    assert split_path("/api/items/1/?x=/y") == ["api", "items", "1"]
    assert split_path("http://host:1/api/x") == ["api", "x"]


def test_literal_routes_win_over_parameters_regardless_of_order() -> None:
    router: Router[str] = Router("api")
    router.add("{*all}", None, "catch-all")
    router.add("items/{id}", None, "param")
    router.add("items/{id:int}", None, "constrained")
    router.add("items/special", None, "literal")
    router.add("items/{name}.{ext}", None, "complex")

    def target(path: str) -> str:
        match = router.resolve("GET", path)
        assert isinstance(match, RouteMatch)
        return match.target

    assert target("/api/items/special") == "literal"
    assert target("/api/items/7") == "constrained"
    assert target("/api/items/seven") == "param"
    assert target("/api/items/a.txt") == "complex"
    assert target("/api/other/thing") == "catch-all"


def test_prefix_is_required_and_case_insensitive() -> None:
    router: Router[str] = Router("api/v1")
    router.add("items", None, "items")
    assert isinstance(router.resolve("GET", "/API/V1/items"), RouteMatch)
    assert router.resolve("GET", "/items") is None
    assert router.resolve("GET", "/api/items") is None


def test_empty_prefix_serves_from_the_root() -> None:
    router: Router[str] = Router("")
    router.add("items", None, "items")
    assert isinstance(router.resolve("GET", "/items"), RouteMatch)


def test_methods_filter_and_mismatch_report() -> None:
    router: Router[str] = Router("api")
    router.add("items", ["post", "PUT"], "write")
    router.add("items/{id}", None, "any")
    assert isinstance(router.resolve("PUT", "/api/items"), RouteMatch)
    mismatch = router.resolve("GET", "/api/items")
    assert mismatch == MethodMismatch(("POST", "PUT"))
    assert isinstance(router.resolve("DELETE", "/api/items/3"), RouteMatch)


def test_method_mismatch_falls_through_to_a_less_specific_route() -> None:
    router: Router[str] = Router("api")
    router.add("items/special", ["POST"], "literal-post")
    router.add("items/{id}", ["GET"], "param-get")
    match = router.resolve("GET", "/api/items/special")
    assert isinstance(match, RouteMatch)
    assert (match.target, match.values) == ("param-get", {"id": "special"})

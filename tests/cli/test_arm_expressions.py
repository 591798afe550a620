"""ARM template expressions as `scheduler import` resolves them (scheduler_cli/arm_expressions.py)."""

from __future__ import annotations

import pytest

from scheduler_cli.arm_expressions import Evaluator, Scope, TemplateError


def _evaluator(**variables) -> Evaluator:
    return Evaluator({"name": "jc", "count": 3, "tags": {"Team": "ops"}}, variables, Scope("sub", "rg", "westus"))


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("[concat(parameters('name'), '/', 'job')]", "jc/job"),
        ("[format('{0}-{1}', parameters('name'), parameters('count'))]", "jc-3"),
        ("[resourceGroup().location]", "westus"),
        ("[resourceGroup().name]", "rg"),
        ("[subscription().subscriptionId]", "sub"),
        (
            "[resourceId('Microsoft.Scheduler/jobCollections/jobs', 'jc', 'j')]",
            "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/j",
        ),
        ("[toUpper(parameters('tags').team)]", "OPS"),
        ("[parameters('tags')['Team']]", "ops"),
        ("[if(equals(parameters('count'), 3), 'three', 'other')]", "three"),
        ("[add(parameters('count'), 2)]", 5),
        ("[concat(createArray(1, 2), createArray(3))]", [1, 2, 3]),
        ("[string(true())]", "True"),
        ("[replace('it''s', 's', 'z')]", "it'z"),
        ("[[not an expression]", "[not an expression]"),
        ("plain", "plain"),
    ],
)
def test_expressions(expression, value) -> None:
    assert _evaluator().resolve(expression, "x") == value


def test_variables_resolve_lazily_and_refuse_cycles() -> None:
    evaluator = _evaluator(a="[concat(variables('b'), '!')]", b="[parameters('name')]", loop="[variables('loop')]")
    assert evaluator.resolve({"v": ["[variables('a')]"]}, "x") == {"v": ["jc!"]}
    with pytest.raises(TemplateError, match="refers to itself"):
        evaluator.resolve("[variables('loop')]", "x")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("[uniqueString(resourceGroup().id)]", "x: the template function 'uniqueString' is not supported"),
        ("[parameters('missing')]", "parameters('missing') is not declared"),
        ("[concat('a']", "missing ')'"),
        ("[parameters('tags').nope]", "no member 'nope'"),
    ],
)
def test_errors_name_the_expression(expression, message) -> None:
    with pytest.raises(TemplateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _evaluator().resolve(expression, "x")

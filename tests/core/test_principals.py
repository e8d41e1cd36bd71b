"""One spelling per person, decided at the door (`core.principals`)."""

from __future__ import annotations

from contracts import DecisionPolicy
from core.principals import people, person, policies_people


def test_a_lark_open_id_is_one_person_with_or_without_its_prefix() -> None:
    assert person("lark:ou_1") == person("ou_1") == "ou_1"
    assert person("alice") == "alice"
    assert person("dingtalk:u_1") == "dingtalk:u_1", "only Lark's prefix names the bare id"


def test_lists_and_policies_keep_their_order_and_their_none() -> None:
    assert people(["lark:ou_1", "bob", "ou_2"]) == ["ou_1", "bob", "ou_2"]
    policies = {
        "sql": DecisionPolicy(approvers=["lark:ou_1"], escalate_to=["lark:ou_2", "carol"]),
        "*": DecisionPolicy(approvers=None),
    }
    assert policies_people(policies) == {
        "sql": DecisionPolicy(approvers=["ou_1"], escalate_to=["ou_2", "carol"]),
        "*": DecisionPolicy(approvers=None),
    }

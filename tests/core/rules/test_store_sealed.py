"""With SYNAPSE_CODEC_KEYS, a rule's body (its reason, its match) is stored sealed, on SQLite and
PostgreSQL; rules are still found by tool, scope, project and user, read after rotation, and rules
saved before the keys were set still read."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from contracts import NewRule, RuleContext, RuleMatch
from core.database import engine_for
from core.rules.store import RuleStore
from core.settings import Settings, TemporalSettings

OLD = f"k1:{base64.b64encode(os.urandom(32)).decode()}"
NEW = f"k2:{base64.b64encode(os.urandom(32)).decode()}"
REASON = "payroll export for Jana Novakova, IBAN DE44500105175407324931"
RULE = NewRule(
    tool="terminal",
    decision="allow",
    scope="project",
    project="shop",
    match=RuleMatch(command_prefix="scp payroll-novakova.csv"),
    reason=REASON,
)
CONTEXT = RuleContext(project="shop")


class Place:
    """Where the rules live (`SYNAPSE_RULES_URL` unset, or a PostgreSQL database), opened with keys."""

    def __init__(self, url: str | None, data_dir: Path) -> None:
        self.url, self.data_dir = url, data_dir
        self.opened: list[RuleStore] = []

    def store(self, codec_keys: str | None) -> RuleStore:
        """The store the worker and the API open with these keys."""
        settings = Settings(
            data_dir=self.data_dir,
            rules_url=self.url,
            temporal=TemporalSettings(codec_keys=codec_keys),
            _env_file=None,
        )
        self.opened.append(RuleStore.from_settings(settings))
        return self.opened[-1]

    def bodies(self) -> str:
        """Every stored body, as an operator reading the table sees them."""
        engine = engine_for(self.url or f"sqlite:///{self.data_dir / 'rules.db'}")
        try:
            with engine.connect() as db:
                return "\n".join(row[0] for row in db.execute(text("SELECT body FROM approval_rules")))
        finally:
            engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Place]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))
    found = Place(url, tmp_path)
    yield found
    for store in found.opened:
        store.close()


def test_a_rule_s_body_is_stored_sealed_and_the_rule_still_decides(place: Place) -> None:
    store = place.store(OLD)
    saved = store.add(RULE)

    stored = place.bodies()
    assert "Novakova" not in stored and "scp payroll" not in stored and stored.startswith("sealed:v1:k1:")
    assert store.for_call("terminal", CONTEXT) == [saved] == store.all(project="shop")
    assert store.get(saved.rule_id).reason == REASON
    if place.url is None:
        held = b"".join(p.read_bytes() for p in place.data_dir.glob("rules.db*"))
        assert b"Novakova" not in held, "nor anywhere in the file or its WAL"


def test_after_rotation_rules_sealed_under_the_old_key_still_decide(place: Place) -> None:
    saved = place.store(OLD).add(RULE)

    assert place.store(f"{NEW},{OLD}").for_call("terminal", CONTEXT) == [saved]
    with pytest.raises(ValueError, match=f"approval_rules.body:{saved.rule_id} encrypted with key 'k1'"):
        place.store(NEW).get(saved.rule_id)


def test_rules_saved_before_the_keys_were_set_still_read(place: Place) -> None:
    before = place.store(None).add(RULE)
    assert "Novakova" in place.bodies(), "the control: saved in clear"

    after = place.store(OLD).add(RULE.model_copy(update={"project": "billing"}))

    assert place.store(OLD).all() == [before, after]


def test_a_sealed_body_moved_to_another_rule_does_not_open(tmp_path: Path) -> None:
    place = Place(None, tmp_path)
    store = place.store(OLD)
    first, second = store.add(RULE), store.add(RULE.model_copy(update={"reason": "other"}))
    engine = engine_for(f"sqlite:///{tmp_path / 'rules.db'}")
    with engine.begin() as db:
        db.execute(
            text(
                "UPDATE approval_rules SET body = (SELECT body FROM approval_rules WHERE rule_id = :a) "
                "WHERE rule_id = :b"
            ),
            {"a": first.rule_id, "b": second.rule_id},
        )
    engine.dispose()
    with pytest.raises(
        ValueError, match=f"approval_rules.body:{second.rule_id} sealed with key 'k1' does not"
    ):
        store.get(second.rule_id)

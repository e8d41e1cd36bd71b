"""The one interpreter of chat text (`workflows/supervision/chat_reply.py`, issue 45): a table of
replies and how each reads, the decision a reply makes, and properties over generated replies:
no reply holding a negation approves, and whatever approves is exactly one confirm phrase once
normalised (by the module and by a small reference normalisation written here).

Decisions the table records:
- `y\u200bes` approves by design: NFKC and the removal of invisible characters come first, so it
  reads `yes`. So do styled letters NFKC folds (`𝐲𝐞𝐬`, `ⓨⓔⓢ`, `ＹＥＳ`): they are the letters y, e,
  s and a person reads them as yes. Look-alike letters of other scripts (Cyrillic `уеs`) are not
  folded (the standard library has no confusables table): ambiguous, a denial that names the
  words that count.
- `@Alice确认`: a mention runs to the next space, so nothing is left to read: ambiguous. Where a
  name ends cannot be told without a space (`@Alice确认` may be someone called that); `@Alice 确认`
  approves.
- A negation counts inside a mention too: `好的 @bot不行` reads `@bot 不行`, and denies.
- A question (`ok?`, `确认？`) asks, it does not answer: ambiguous. Emoji other than a few plainly
  approving ones (`👍` `👌` `✅` ...), combining marks (`c̶o̶n̶f̶i̶r̶m̶`, `ye̸s`) and Markdown
  strike-through (`~~yes~~`) keep a reply from being a plain yes: `yes ❌` and `ok 🙄` do not approve.
- An emoji alone (`👍`) is not a phrase of the table: ambiguous.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from contracts import (
    Answer,
    Ask,
    Decision,
    DecisionSource,
    GateAsk,
    InboundMessage,
    InteractionRequest,
    InteractionType,
    QuestionAsk,
    Role,
    ToolApprovalAsk,
    Verdict,
)
from workflows.supervision.chat_reply import (
    CANCEL,
    CONFIRM,
    NEGATION_EN,
    NEGATION_ZH,
    WORDS_THAT_COUNT,
    compact,
    interpret,
    negated,
    normalize,
    to_decision,
)

AT = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)

ROWS: list[tuple[str, str]] = [
    # The replies attackers found approving under the old interpreter.
    ("do not approve", "deny"),
    ("请勿执行", "deny"),
    ("先别确认", "deny"),
    ("never confirm this", "deny"),
    ("I cannot approve this", "deny"),
    ("approve? absolutely not", "deny"),
    ("don't do it, ok?", "deny"),
    ("同意", "approve"),
    ("可以", "approve"),
    ("好的", "approve"),
    ("y\u200bes", "approve"),  # by design: a zero-width space is read away first
    # Each phrase of the table, alone.
    ("确认", "approve"),
    ("确定", "approve"),
    ("批准", "approve"),
    ("执行", "approve"),
    ("好", "approve"),
    ("行", "approve"),
    ("没问题", "approve"),
    ("是的", "approve"),
    ("确认执行", "approve"),
    ("確認", "approve"),
    ("執行", "approve"),
    ("yes", "approve"),
    ("y", "approve"),
    ("ok", "approve"),
    ("okay", "approve"),
    ("approve", "approve"),
    ("approved", "approve"),
    ("confirm", "approve"),
    ("lgtm", "approve"),
    ("sure", "approve"),
    ("proceed", "approve"),
    # Case, polite approvals, punctuation.
    ("YES", "approve"),
    ("Ok", "approve"),
    ("LGTM!", "approve"),
    ("yes please", "approve"),
    ("yes, please!", "approve"),
    ("go ahead", "approve"),
    ("Go ahead.", "approve"),
    ("do it", "approve"),
    ("确认！", "approve"),
    ("好的。", "approve"),
    ("【确认】", "approve"),
    ("“yes”", "approve"),
    ("*approve*", "approve"),
    ("ok…", "approve"),
    ("好的～", "approve"),
    ("y e s", "approve"),
    # Full-width and styled letters.
    ("ＹＥＳ", "approve"),
    ("ｏｋ", "approve"),
    ("ｙｅｓ\u3000", "approve"),
    ("𝐲𝐞𝐬", "approve"),  # NFKC folds mathematical bold: the letters y, e, s
    ("ⓨⓔⓢ", "approve"),
    # Zero-width and other format or invisible characters are read away.
    ("y\u200des", "approve"),
    ("o\u2060k", "approve"),
    ("\ufeffyes", "approve"),
    ("ok\u202e", "approve"),
    ("好\u00ad的", "approve"),
    ("y\u034fes", "approve"),  # combining grapheme joiner: invisible
    ("\u202eko", "ambiguous"),  # shown as `ok`, but it is the letters k, o
    ("\u200b\u200d\u2060", "ambiguous"),
    # @mentions.
    ("@bot 确认", "approve"),
    ("@_user_1 yes", "approve"),
    ("@bot @_user_2 ok", "approve"),
    ("确认 @bot", "approve"),
    ("@Alice确认", "ambiguous"),  # the mention runs to the next space: nothing is left
    ("@bot", "ambiguous"),
    ("@not yes", "deny"),
    ("好的 @bot不行", "deny"),  # reads `@bot 不行`
    ("ok@不行", "deny"),
    # Emoji and symbols.
    ("ok 👍", "approve"),
    ("好的👌🏻", "approve"),
    ("😊 好的", "approve"),
    ("👍\ufe0f ok", "approve"),
    ("👍", "ambiguous"),
    ("✅", "ambiguous"),
    ("yes ❌", "ambiguous"),
    ("yes 👎", "ambiguous"),
    ("🚫 approve", "ambiguous"),
    ("ok 🙄", "ambiguous"),
    ("> yes", "ambiguous"),  # quotes someone else's yes
    ("¬ok", "ambiguous"),
    ("~~yes~~", "ambiguous"),  # struck through in Markdown
    # Nothing left, or only punctuation.
    ("", "ambiguous"),
    ("   ", "ambiguous"),
    ("!!!", "ambiguous"),
    ("。。。", "ambiguous"),
    # Two phrases, or more than a phrase.
    ("ok 好的", "ambiguous"),
    ("确认 yes", "ambiguous"),
    ("yes yes", "ambiguous"),
    ("确认一下这个是什么", "ambiguous"),
    ("I approve of your plan but wait", "ambiguous"),
    ("ok but change the table first", "ambiguous"),
    ("sure thing", "ambiguous"),
    ("nah", "ambiguous"),
    ("嗯", "ambiguous"),
    ("好滴", "ambiguous"),
    # Questions ask; they do not answer.
    ("ok?", "ambiguous"),
    ("确认？", "ambiguous"),
    ("yes?!", "ambiguous"),
    ("可以吗", "ambiguous"),
    ("没问题吗", "ambiguous"),
    ("好吗", "ambiguous"),
    # Look-alikes and marks.
    ("уеs", "ambiguous"),  # Cyrillic у and е
    ("ye\u0301s", "ambiguous"),
    ("ye\u0338s", "ambiguous"),  # crossed out
    ("yes\u20e0", "ambiguous"),  # with a "prohibited" circle
    ("c\u0336o\u0336n\u0336f\u0336i\u0336r\u0336m\u0336", "deny"),  # struck through; `n` stands alone
    # Chinese negations, anywhere.
    ("不是", "deny"),
    ("好不好", "deny"),
    ("不确认", "deny"),
    ("确认不了", "deny"),
    ("行不行", "deny"),
    ("可不可以", "deny"),
    ("别执行", "deny"),
    ("勿批准", "deny"),
    ("没同意", "deny"),
    ("莫执行", "deny"),
    ("否", "deny"),
    ("未确认", "deny"),
    ("沒問題", "deny"),  # traditional 沒 is a negation; only `没问题` is in the table
    ("好的，不过先备份", "deny"),
    ("确认？不", "deny"),
    ("不\u200b确认", "deny"),
    ("\uf967确认", "deny"),  # a compatibility ideograph NFKC reads as 不
    # English negations, anywhere, in any case and width, with any apostrophe.
    ("no", "deny"),
    ("No.", "deny"),
    ("n", "deny"),
    ("nope", "deny"),
    ("NEVER", "deny"),
    ("not ok", "deny"),
    ("ok not", "deny"),
    ("yes, no", "deny"),
    ("yes/no", "deny"),
    ("DON'T", "deny"),
    ("don’t approve", "deny"),
    ("donʼt approve", "deny"),
    ("dont approve", "deny"),
    ("can't approve", "deny"),
    ("approve it, won't you", "deny"),
    ("ｎｏｔ ｏｋ", "deny"),
    ("n\u200bot approve", "deny"),
    ("do\u00adn't approve", "deny"),
    ("no problem", "deny"),  # says `no`: a false denial, and a safe one
    # Cancel phrases.
    ("取消", "deny"),
    ("算了", "deny"),
    ("拒绝", "deny"),
    ("cancel", "deny"),
    ("Stop!", "deny"),
    ("reject", "deny"),
]


def test_the_table_is_large_and_has_no_repeated_reply() -> None:
    assert len(ROWS) >= 80
    assert len({reply for reply, _ in ROWS}) == len(ROWS)


@pytest.mark.parametrize(("reply", "reading"), ROWS)
def test_each_reply_reads_as_the_table_says(reply: str, reading: str) -> None:
    read = interpret(reply)
    assert read.reading == reading, (reply, compact(reply))
    assert read.approved == (reading == "approve")


def test_no_confirm_phrase_but_one_holds_a_negation() -> None:
    """`没问题` ("no problem") is the only confirm phrase holding a negation character; it approves
    only as the whole reply."""
    holding = {phrase for phrase in CONFIRM if set(phrase) & set(NEGATION_ZH) or phrase in NEGATION_EN}
    assert holding == {"没问题"}
    assert not any(negated(phrase) for phrase in CONFIRM)
    assert not any(cancel in phrase for phrase in CONFIRM for cancel in CANCEL)
    assert all(compact(phrase) == phrase for phrase in CONFIRM)
    assert interpret("没问题！").approved
    assert not interpret("没问题没问题").approved
    assert not interpret("没 问题").approved


def message(content: str, message_id: str | None = "om_1") -> InboundMessage:
    return InboundMessage(
        channel="lark",
        sender_id="lark:ou_bob",
        chat_id="oc_1",
        content=content,
        message_id=message_id,
        role=Role.approver,
    )


ASKS: dict[InteractionType, Ask] = {
    InteractionType.TOOL_APPROVAL: ToolApprovalAsk(tool="sql", summary="sql: DELETE FROM orders"),
    InteractionType.USER_INPUT: QuestionAsk(question="Which table?"),
    InteractionType.CONFIRMATION: GateAsk(task_id="t", task_uuid="u"),
}


def request(kind: InteractionType) -> InteractionRequest:
    return InteractionRequest(
        interaction_id="tool_1",
        interaction_type=kind,
        workflow_id="session:s",
        content={"summary": "sql: DELETE FROM orders"},
        timestamp=AT,
        ask=ASKS[kind],
    )


def expect(said: Verdict | Answer, comment: str | None, message_id: str | None = "om_1") -> Decision:
    return Decision(
        interaction_id="tool_1",
        principal="lark:ou_bob",
        role=Role.approver,
        channel="lark",
        source=DecisionSource.CHAT,
        said=said,
        comment=comment,
        metadata={"message_id": message_id} if message_id else {},
    )


@pytest.mark.parametrize("kind", [InteractionType.TOOL_APPROVAL, InteractionType.CONFIRMATION])
@pytest.mark.parametrize(
    ("reply", "approved"),
    [("@bot 确认！", True), ("ＹＥＳ", True), ("先别确认", False), ("don't do it, ok?", False)],
)
def test_a_reply_is_the_senders_verdict_with_the_reply_as_comment(
    kind: InteractionType, reply: str, approved: bool
) -> None:
    decision = to_decision(message(f"  {reply} "), request(kind))
    assert decision == expect(Verdict(approved=approved), reply)


@pytest.mark.parametrize("kind", [InteractionType.TOOL_APPROVAL, InteractionType.CONFIRMATION])
@pytest.mark.parametrize("reply", ["确认一下这个是什么", "ok?", "@Alice确认", "👍"])
def test_an_ambiguous_reply_denies_and_names_the_words_that_count(kind: InteractionType, reply: str) -> None:
    decision = to_decision(message(reply), request(kind))
    assert decision.said == Verdict(approved=False)
    assert decision.comment is not None
    assert repr(reply) in decision.comment
    assert WORDS_THAT_COUNT in decision.comment
    for word in ("确认", "同意", "可以", "好的", "yes", "ok", "approve"):
        assert word in decision.comment
    assert decision.model_dump(exclude={"said", "comment"}) == expect(
        Verdict(approved=False), None
    ).model_dump(exclude={"said", "comment"})


@pytest.mark.parametrize("reply", ["不确认，用 eu-west", "yes", "do not approve", "👍"])
def test_a_questions_answer_is_the_whole_text_whatever_it_says(reply: str) -> None:
    decision = to_decision(message(f" {reply}\n"), request(InteractionType.USER_INPUT))
    assert decision == expect(Answer(text=reply), None)


def test_a_message_without_an_id_leaves_no_message_id() -> None:
    decision = to_decision(message("确认", message_id=None), request(InteractionType.TOOL_APPROVAL))
    assert decision == expect(Verdict(approved=True), "确认", message_id=None)


# Properties over generated replies.

CONFIRM_TOKENS = [*sorted(CONFIRM), "go ahead", "yes please", "do it"]
NEGATIONS_ZH = [*"不别勿没莫否", "不要", "别了", "没有", "不行", "取消", "算了"]
NEGATIONS_EN = (
    "no n not nope never cannot nothing none nor neither don't dont doesn't can't cant won't isn't "
    "shouldn't haven't cancel stop reject"
).split()
APOSTROPHES = ["'", "’", "ʼ", "＇", ""]
NOISE = "please the table it now wait run this lol 123 先 这个 一下 问题 吧".split()
PUNCTUATION = [",", ".", "!", "?", "，", "。", "！", "？", "~", "…", "-", "(", ")", '"', "【", "】"]
SPACES = [" ", "  ", "\u3000", "\t", "\n", "\u00a0"]
INVISIBLE = list("\u200b\u200c\u200d\u2060\ufeff\u00ad\u202e\u202c\u034f\ufe0f")
MENTIONS = ["@bot", "@_user_1", "@Alice", "@机器人"]
EMOJI = ["👍", "👌", "✅", "😊", "🙂", "❌", "🙄"]


def full_width(char: str) -> str:
    return chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char


@st.composite
def styled(draw: st.DrawFn, word: str) -> str:
    """`word` in any case, any letter full-width, invisible characters anywhere inside."""
    out = []
    for char in word:
        char = draw(st.sampled_from([char, char.upper()]))
        char = draw(st.sampled_from([char, full_width(char)]))
        out.append(char + draw(st.sampled_from(["", "", "", *INVISIBLE])))
    return "".join(out)


@st.composite
def negation(draw: st.DrawFn) -> str:
    """A negation standing as a word: an English one between visible delimiters (letters glued to
    it would make another word: `knot`), a Chinese one anywhere."""
    if draw(st.booleans()):
        return draw(styled(draw(st.sampled_from(NEGATIONS_ZH))))
    word = draw(st.sampled_from(NEGATIONS_EN)).replace("'", draw(st.sampled_from(APOSTROPHES)))
    delimiter = st.sampled_from([*SPACES, *[p for p in PUNCTUATION if p != "~"]])
    return draw(delimiter) + draw(styled(word)) + draw(delimiter)


piece = st.one_of(
    st.sampled_from(CONFIRM_TOKENS).flatmap(styled),
    st.sampled_from(NOISE),
    st.sampled_from(PUNCTUATION),
    st.sampled_from(EMOJI),
    st.sampled_from(MENTIONS),  # what follows may run into it: `@bot不行`, `@bot,not`
)
separator = st.sampled_from(["", " ", *SPACES, *INVISIBLE, *PUNCTUATION])


@st.composite
def decorated_confirm(draw: st.DrawFn) -> str:
    """A confirm phrase as people type it: a mention before it, punctuation, spaces, emoji that
    approve, trailing tildes, any case, full width, invisible characters."""
    phrase = draw(styled(draw(st.sampled_from(CONFIRM_TOKENS))))
    mention = draw(st.sampled_from(["", *(m + " " for m in MENTIONS)]))
    around = st.lists(
        st.sampled_from([*SPACES, *INVISIBLE, "!", ".", "。", "！", "…", '"', "【", "】"]), max_size=3
    )
    after = st.lists(st.sampled_from(["!", "。", "~", "～", "👍", "👌🏻", "✅", "😊", " "]), max_size=3)
    return mention + "".join(draw(around)) + phrase + "".join(draw(around)) + "".join(draw(after))


@st.composite
def reply(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(piece, max_size=6))
    return "".join(part + draw(separator) for part in pieces)


@st.composite
def negated_reply(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        pieces = draw(st.lists(piece, max_size=6))
    else:  # one confirm phrase and a few extras: where a negation would have to hide to approve
        extras = draw(st.lists(st.sampled_from([*MENTIONS, *EMOJI, *PUNCTUATION]), max_size=2))
        pieces = draw(st.permutations([draw(decorated_confirm()), *extras]))
    for _ in range(draw(st.integers(1, 2))):
        pieces.insert(draw(st.integers(0, len(pieces))), draw(negation()))
    return "".join(part + draw(separator) for part in pieces)


def reference_compact(text: str) -> str:
    """An independent normalisation: NFKC, without format characters and mentions, case-folded,
    letters and digits only. Coarser than `compact` (it drops every symbol, mark and question)."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(char for char in text if unicodedata.category(char) != "Cf")
    text = re.sub(r"@\S+", " ", text).casefold()
    return "".join(char for char in text if char.isalnum())


@settings(max_examples=500, deadline=None)
@given(negated_reply())
def test_no_reply_holding_a_negation_approves(text: str) -> None:
    # The idiom `没问题` ("no problem") approves as the whole reply, and a drawn `没` may stand
    # right before the noise word `问题`: exactly that reply is left out. Every other reply holding
    # a negation must not approve, and reads as a denial that says no (unless the drawn `没` became
    # part of the idiom inside a longer reply: then it is ambiguous, which denies too).
    assume(reference_compact(text) != "没问题")
    read = interpret(text)
    assert read.reading != "approve", (text, normalize(text), compact(text))
    if "没问题" not in reference_compact(text):
        assert read.reading == "deny", (text, normalize(text))


@settings(max_examples=500, deadline=None)
@given(st.one_of(reply(), decorated_confirm()))
def test_whatever_approves_is_exactly_one_confirm_phrase(text: str) -> None:
    if interpret(text).approved:
        assert compact(text) in CONFIRM, (text, compact(text))
        assert reference_compact(text) in CONFIRM, (text, reference_compact(text))
        assert reference_compact(text) == compact(text)
        assert not negated(text)


@settings(max_examples=300, deadline=None)
@given(decorated_confirm())
def test_a_confirm_phrase_as_people_type_it_approves(text: str) -> None:
    assert interpret(text).approved, (text, normalize(text), compact(text))

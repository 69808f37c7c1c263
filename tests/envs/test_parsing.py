"""envs.parsing: every action form of DESIGN.md, errors that teach the right form, never raising."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servicegym.envs.environments.parsing import TOOL_CALL_FORM, ParsedAction, ToolCall, parse_action

ARGS = {"store_id": "S001"}
CALL = {"name": "get_delivery_store_info", "arguments": ARGS}
CALL2 = {"name": "delivery_product_search_recommend", "arguments": {"keywords": ["beef", "noodles"], "top_k": 3}}


def calls(parsed: ParsedAction) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in parsed.tool_calls]


def openai_message(*fns: dict, content=None, as_string: bool = False, ids: bool = True) -> dict:
    tool_calls = []
    for i, fn in enumerate(fns):
        args = json.dumps(fn["arguments"]) if as_string else fn["arguments"]
        entry = {"type": "function", "function": {"name": fn["name"], "arguments": args}}
        if ids:
            entry["id"] = f"call_abc{i}"
        tool_calls.append(entry)
    return {"role": "assistant", "content": content, "tool_calls": tool_calls}


def tag(obj) -> str:
    return f"<tool_call>{json.dumps(obj)}</tool_call>"


ONE = [(CALL["name"], ARGS)]
TWO = [(CALL["name"], ARGS), (CALL2["name"], CALL2["arguments"])]


@pytest.mark.parametrize(
    ("action", "expected", "message"),
    [
        pytest.param(json.dumps(CALL), ONE, "", id="json-call"),
        pytest.param("  \n" + json.dumps(CALL) + "\n", ONE, "", id="json-call-blank-padded"),
        pytest.param(json.dumps([CALL, CALL2]), TWO, "", id="json-list"),
        pytest.param(json.dumps({"name": CALL["name"], "parameters": ARGS}), ONE, "", id="parameters-key"),
        pytest.param(json.dumps({"function": CALL}), ONE, "", id="function-wrapper"),
        pytest.param(json.dumps(openai_message(CALL, CALL2)), TWO, "", id="openai-object-args"),
        pytest.param(json.dumps(openai_message(CALL, CALL2, as_string=True)), TWO, "", id="openai-string-args"),
        pytest.param(json.dumps(openai_message(CALL, content="Let me look.")), ONE, "Let me look.",
                     id="openai-with-content"),
        pytest.param(json.dumps({"tool_calls": [{"function": {"name": CALL["name"], "arguments": json.dumps(ARGS)}}]}),
                     ONE, "", id="bare-tool_calls"),
        pytest.param(json.dumps({"name": CALL["name"], "arguments": json.dumps(json.dumps(ARGS))}), ONE, "",
                     id="doubly-encoded-args"),
        pytest.param(json.dumps(openai_message({"name": CALL["name"], "arguments": json.dumps(ARGS)}, as_string=True)),
                     ONE, "", id="openai-doubly-encoded-args"),
        pytest.param(json.dumps({"name": "get_user_all_orders", "arguments": ""}), [("get_user_all_orders", {})], "",
                     id="empty-string-args"),
        pytest.param(json.dumps({"name": "get_user_all_orders", "arguments": None}), [("get_user_all_orders", {})], "",
                     id="null-args"),
        pytest.param(tag(CALL), ONE, "", id="tool_call-block"),
        pytest.param("I'll check two things.\n" + tag(CALL) + "\n" + tag(CALL2) + "\nOne moment.", TWO,
                     "I'll check two things.\n\n\nOne moment.", id="several-blocks-in-prose"),
        pytest.param(tag(CALL) + tag(CALL2), TWO, "", id="adjacent-blocks"),
        pytest.param("<tool_call>" + json.dumps(CALL), ONE, "", id="unclosed-final-block"),
        pytest.param(tag([CALL, CALL2]), TWO, "", id="list-inside-block"),
        pytest.param(tag(openai_message(CALL, as_string=True)), ONE, "", id="openai-inside-block"),
        pytest.param("Sure, checking the store now: " + json.dumps(CALL) + " and then I'll report back.", ONE,
                     "Sure, checking the store now:  and then I'll report back.", id="call-inside-prose"),
        pytest.param("First " + json.dumps(CALL) + " then " + json.dumps(CALL2), TWO, "First  then",
                     id="two-calls-inside-prose"),
        pytest.param("Checking.\n```json\n" + json.dumps(CALL, indent=2) + "\n```", ONE, "Checking.", id="fenced-json"),
        pytest.param("```\n" + json.dumps([CALL, CALL2]) + "\n```", TWO, "", id="fenced-list-no-lang"),
    ],
)
def test_accepted_forms(action, expected, message):
    parsed = parse_action(action)
    assert parsed.errors == []
    assert calls(parsed) == expected
    assert parsed.message == message
    assert all(isinstance(c, ToolCall) for c in parsed.tool_calls)


def test_openai_ids_are_kept():
    parsed = parse_action(json.dumps(openai_message(CALL, CALL2)))
    assert [c.call_id for c in parsed.tool_calls] == ["call_abc0", "call_abc1"]
    assert parse_action(json.dumps(CALL)).tool_calls[0].call_id == ""


@pytest.mark.parametrize(
    "action",
    [
        "Hello, what would you like to eat today?",
        "我想帮您点一份外卖，请问送到哪里？",
        '{"note": "this is JSON but not a call"}',
        "[1, 2, 3]",
        "The store's name is \"Sunny\" and it opens at 9.",
        '{"role": "assistant", "content": "Plain reply in message form."}',
        "###STOP###",
    ],
)
def test_messages(action):
    parsed = parse_action(action)
    assert parsed.is_message and parsed.tool_calls == [] and parsed.errors == []
    expected = json.loads(action)["content"] if action.startswith('{"role"') else action
    assert parsed.message == expected


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ("", "empty action"),
        ("   \n ", "empty action"),
        ('{"name": "get_delivery_store_info", "arguments": {"store_id": "S001"}', "not valid JSON"),
        ('{"tool_calls": [oops]}', "not valid JSON"),
        ("<tool_call>{name: get_delivery_store_info}</tool_call>", "<tool_call> block is not valid JSON"),
        ("<tool_call></tool_call>", "not valid JSON"),
        ('{"tool_calls": [{"function": {"arguments": {}}}]}', 'needs a string "name"'),
        ('{"name": "", "arguments": {}}', 'needs a string "name"'),
        ('{"tool_calls": [{"name": "x", "arguments": {}}, 7]}', "must be a JSON object, got int"),
        ('{"tool_calls": {"name": "x"}}', '"tool_calls" must be a list'),
        ('{"tool_calls": []}', "no tool call and no message"),
        ('{"role": "assistant", "content": null, "tool_calls": null}', "no tool call and no message"),
        ("<tool_call>[]</tool_call>", "no tool call and no message"),
        ('{"role": "assistant", "content": ""}', "no content and no tool_calls"),
    ],
)
def test_errors_say_what_was_wrong(action, fragment):
    parsed = parse_action(action)
    assert parsed.errors, parsed
    assert fragment in " ".join(parsed.errors)
    assert not parsed.is_message


def test_errors_show_the_right_form():
    for action in ["", '{"name": "x", "arguments": {', "<tool_call>nope</tool_call>", '{"tool_calls": []}']:
        assert TOOL_CALL_FORM in " ".join(parse_action(action).errors), action


@pytest.mark.parametrize("value", [None, 42, ["a"], {"name": "x"}, b"bytes"])
def test_non_string_action(value):
    parsed = parse_action(value)
    assert parsed.errors and "must be a string" in parsed.errors[0]


@pytest.mark.parametrize("depth", [5, 50, 500, 950, 5000])
def test_deep_nesting_does_not_recurse_without_bound(depth):
    # regression: 500 nested lists raised RecursionError out of the parser
    for action in ["[" * depth + "]" * depth,
                   '{"tool_calls": [' * depth + "]}" * depth,
                   "[" * depth + json.dumps(CALL) + "]" * depth,
                   "<tool_call>" + "[" * depth + json.dumps(CALL) + "]" * depth + "</tool_call>"]:
        parsed = parse_action(action)
        assert isinstance(parsed, ParsedAction)


def test_back_to_back_calls_and_trailing_prose():
    # regression: a text starting with "{" that was not one JSON document was refused outright
    parsed = parse_action(json.dumps(CALL) + "\n" + json.dumps(CALL2))
    assert parsed.errors == [] and calls(parsed) == TWO
    parsed = parse_action(json.dumps(CALL) + " Checking that store for you.")
    assert calls(parsed) == ONE and parsed.message == "Checking that store for you."


@pytest.mark.parametrize(
    "action",
    [
        'x "name" ' + '{"a":' * 40_000,
        'x "name" ' + "{" * 200_000,
        "x ```json\n{" * 40_000,
        '{"name": ' * 40_000,
        "<tool_call>" * 40_000,
    ],
    ids=["nested-objects", "open-braces", "unclosed-fences", "repeated-prefix", "open-tags"],
)
def test_degenerate_long_actions_parse(action):
    # regression: these took from seconds to minutes (quadratic scans); now linear-bounded
    check_parsed(parse_action(action))


# ----- properties --------------------------------------------------------------------------
KEYS = ["name", "arguments", "parameters", "function", "tool_calls", "id", "type", "role", "content", "store_id"]
json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10), st.sampled_from(["get_delivery_store_info", "assistant", "function", "{", "}", '"name"']),
)
json_values = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=5)), inner, max_size=5),
    ),
    max_leaves=20,
)


@st.composite
def near_json(draw) -> str:
    """JSON that looks like tool calls, then damaged, wrapped or re-encoded."""
    obj = draw(json_values)
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    op = draw(st.sampled_from(["plain", "truncate", "splice", "tag", "tags", "fence", "prose", "double", "nested"]))
    if op == "truncate" and text:
        text = text[: draw(st.integers(0, len(text)))]
    elif op == "splice" and text:
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(["{", "}", "[", "]", '"', ",", ":", "\\", "<tool_call>", "```"])) + text[i:]
    elif op == "tag":
        text = f"<tool_call>{text}</tool_call>"
    elif op == "tags":
        text = f"a <tool_call>{text}</tool_call> b <tool_call>{text}"
    elif op == "fence":
        text = f"see\n```json\n{text}\n```"
    elif op == "prose":
        text = f'here "name" {text} there'
    elif op == "double":
        text = json.dumps({"name": "get_delivery_store_info", "arguments": json.dumps(text)})
    elif op == "nested":
        text = json.dumps({"tool_calls": [{"function": {"name": "x", "arguments": text}}, obj]})
    return text


actions = st.one_of(st.text(), st.text(alphabet='{}[]":,<>/tool_calname `json\\'), near_json())


def check_parsed(parsed: ParsedAction) -> None:
    assert isinstance(parsed, ParsedAction)
    assert isinstance(parsed.message, str)
    assert all(isinstance(e, str) and e for e in parsed.errors)
    for c in parsed.tool_calls:
        assert isinstance(c, ToolCall) and isinstance(c.name, str) and c.name.strip() == c.name and c.name
        assert isinstance(c.call_id, str)
    # something always comes out: a call, a message or an error
    assert parsed.tool_calls or parsed.errors or parsed.message.strip()


@given(action=actions)
def test_parse_action_never_raises(action):
    check_parsed(parse_action(action))


identifier = st.from_regex(r"[a-z][a-z_]{0,19}", fullmatch=True)
# argument text that cannot close a <tool_call> block or a fence
safe_text = st.text(st.characters(blacklist_characters="<`", blacklist_categories=("Cs",)), max_size=12)
arg_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), safe_text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(safe_text, inner, max_size=3)),
    max_leaves=8,
)
call_objects = st.fixed_dictionaries({"name": identifier, "arguments": st.dictionaries(identifier, arg_values,
                                                                                       max_size=4)})
prose = st.text(alphabet="abcdefghij ,.!?\n", max_size=30)


@given(
    fns=st.lists(call_objects, min_size=1, max_size=3),
    form=st.sampled_from(["json", "list", "openai-obj", "openai-str", "openai-double", "tags", "fence", "prose"]),
    before=prose,
    after=prose,
)
def test_every_form_gives_back_the_calls(fns, form, before, after):
    expected = [(f["name"], f["arguments"]) for f in fns]
    if form == "json":
        fns = fns[:1]
        expected = expected[:1]
        action = json.dumps(fns[0])
    elif form == "list":
        action = json.dumps(fns)
    elif form in ("openai-obj", "openai-str"):
        action = json.dumps(openai_message(*fns, as_string=form == "openai-str", content=before or None))
    elif form == "openai-double":
        action = json.dumps(openai_message(*({"name": f["name"], "arguments": json.dumps(f["arguments"])} for f in fns),
                                           as_string=True))
    elif form == "tags":
        action = before + "".join(tag(f) + after for f in fns)
    elif form == "fence":
        action = before + "\n```json\n" + json.dumps(fns) + "\n```\n" + after
    else:
        action = before + " " + " ".join(json.dumps(f) for f in fns) + " " + after
    parsed = parse_action(action)
    assert parsed.errors == []
    assert calls(parsed) == expected

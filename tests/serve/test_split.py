"""``serve.load``: a capture that holds several conversations interleaved (``interleaving``) is served as that
many scripts, grouped by the rule ``stream-doctor record`` groups requests by (``record.echo.continues``), and a
capture of one conversation is one script as before; ``matching.Choice``: which script answers a new conversation
when several have its first request."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings

from stream_doctor.serve.load import Script, load_script, load_scripts
from stream_doctor.serve.matching import Choice
from stream_doctor.serve.wire import CONVERSATION_HEADER
from tests.conftest import FIXTURES
from tests.serve.interleaving import CASSETTES, Order, interactions, interleaved, orders

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)


def bodies(script: Script) -> list[bytes]:
    return [turn.recorded.body for turn in script.turns]


@cache
def own_bodies(name: str) -> list[bytes]:
    return bodies(load_script(str(FIXTURES / "conversations" / f"{name}.yaml")))


@SETTINGS
@given(orders())
def test_interleaved_conversations_are_served_as_the_scripts_they_were(
    tmp_path_factory: pytest.TempPathFactory, order: Order
) -> None:
    path = interleaved(tmp_path_factory.mktemp("interleaved"), order)
    scripts = load_scripts(path)
    began = list(dict.fromkeys(number for number, _ in order))  # conversations in the order each began
    names = [CASSETTES[number] for number in began]
    assert [bodies(script) for script in scripts] == [own_bodies(name) for name in names]
    assert [(s.conversation, s.conversations, [t.number for t in s.turns]) for s in scripts] == [
        (index, 4, list(range(1, len(own_bodies(name)) + 1))) for index, name in enumerate(names, 1)
    ]
    assert scripts[0].name == f"{path} (conversation 1 of 4)"
    said = [dict(turn.recorded.headers)[CONVERSATION_HEADER] for script in scripts for turn in script.turns]
    assert said == [f"{s.conversation} of 4 in agents.yaml" for s in scripts for _ in s.turns]


def test_a_capture_of_one_conversation_is_one_script_as_before() -> None:
    """The near miss: each turn continues the one before it (by history, and by the call's id)."""
    path = str(FIXTURES / "conversations/anthropic_echo_empty_input.yaml")
    (script,) = load_scripts(path)
    assert (script.name, script.conversation, script.conversations) == (path, 1, 1)
    assert load_script(path) == script and len(script.turns) == 2
    assert all(CONVERSATION_HEADER not in dict(turn.recorded.headers) for turn in script.turns)


def test_a_follow_up_that_sends_back_only_the_call_id_continues_its_conversation(tmp_path: Path) -> None:
    """The history edited (the first question reworded) but the call's result sent back by its id: the call id
    alone continues the conversation, as the proxy groups it; with the id changed too it continues none."""
    first, second = interactions("anthropic_two_turns")
    other = interactions("anthropic_echo_empty_input")

    def edited(new_id: str | None) -> dict[str, Any]:
        follow_up = copy.deepcopy(second)
        body = orjson.loads(follow_up["request"]["body"])
        body["messages"][0]["content"] = "Porto weather, please."
        if new_id is not None:  # the call sent back and its result, both under another id
            (call,) = [block for block in body["messages"][1]["content"] if block["type"] == "tool_use"]
            call["id"] = body["messages"][2]["content"][0]["tool_use_id"] = new_id
        follow_up["request"]["body"] = orjson.dumps(body).decode()
        return follow_up

    kept = load_scripts(interleaved(tmp_path, [(0, first), (1, other[0]), (0, edited(None)), (1, other[1])]))
    assert [len(script.turns) for script in kept] == [2, 2]
    cut = load_scripts(interleaved(tmp_path, [(0, first), (1, other[0]), (0, edited("toolu_unknown")), (1, other[1])]))
    assert [len(script.turns) for script in cut] == [1, 2, 1]  # it starts a conversation of its own


def test_the_same_request_sent_again_after_a_whole_answer_starts_another_conversation() -> None:
    """The agent's watchdog sent its first request again: a conversation of its own, as the proxy groups it,
    so the application's own resend is answered with what the capture's resend got."""
    path = str(FIXTURES / "anthropic/pending_after_message_stop.jsonl")
    first, again = load_scripts(path)
    assert first.turns[0].request is not None and again.turns[0].request is not None
    assert first.turns[0].request["body"] == again.turns[0].request["body"]
    assert first.turns[0].recorded.body != again.turns[0].recorded.body


def test_a_new_conversation_takes_the_first_script_not_yet_taken_then_each_in_turn() -> None:
    first, again = load_scripts(str(FIXTURES / "anthropic/pending_after_message_stop.jsonl"))
    other = load_script(str(FIXTURES / "conversations/anthropic_two_turns.yaml"))
    request = first.turns[0].request
    assert request is not None
    choice = Choice()
    scripts = [other, first, again]
    assert [choice.chosen(scripts, request["body"]) for _ in range(5)] == [first, again, first, again, first]
    # the near miss: a request no script begins with gets the first script, whose first turn refuses it
    asked = {**request["body"], "messages": [{"role": "user", "content": "Something else"}]}
    assert choice.chosen(scripts, asked) is other
    assert choice.chosen([other], orjson.loads(interactions("anthropic_two_turns")[0]["request"]["body"])) is other


def test_a_responses_follow_up_that_names_the_previous_response_continues_its_conversation(tmp_path: Path) -> None:
    """Responses with the conversation kept by the provider: the follow-up sends only a new user message and
    ``previous_response_id``, no history, no call: the response id alone continues; another id continues none."""
    first, second = interactions("responses_two_turns")
    other = interactions("responses_item_id_echoed_accepted")
    answered = load_script(str(FIXTURES / "conversations/responses_two_turns.yaml")).turns[0].recorded.body
    response_id = orjson.loads(answered.split(b"data: ", 1)[1].split(b"\n", 1)[0])["response"]["id"]

    def naming(previous: str) -> dict[str, Any]:
        follow_up = copy.deepcopy(second)
        body = orjson.loads(follow_up["request"]["body"])
        body.update(previous_response_id=previous, input=[{"role": "user", "content": "And tomorrow?"}])
        follow_up["request"]["body"] = orjson.dumps(body).decode()
        return follow_up

    kept = load_scripts(interleaved(tmp_path, [(0, first), (1, other[0]), (0, naming(response_id)), (1, other[1])]))
    assert [len(script.turns) for script in kept] == [2, 2]
    cut = load_scripts(interleaved(tmp_path, [(0, first), (1, other[0]), (0, naming("resp_other")), (1, other[1])]))
    assert [len(script.turns) for script in cut] == [1, 2, 1]

"""Results some write tools print without the JSON encoder's walk (issue 29: the encoder's walk and its row
callback cost more than those writes' own work) must be exactly the encoder's text, whatever the strings
hold; and ``History.called``, kept per tool since, must answer as the set of (tool, string argument) it
replaced."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from servicegym.world_state.core import History
from servicegym.world_state.instore.entities import Booking, Reservation
from servicegym.world_state.payments.capabilities import _payout_json, _refund_json
from servicegym.world_state.payments.entities import Payout, Refund
from servicegym.world_state.tools import dumps

# any text, lone surrogates, quotes, backslashes and control characters included
TEXT = st.text(st.characters(codec=None, categories=None), max_size=30) | st.sampled_from(
    ['', '"', "\\", "\n\t", "\ud800", "\u2028", "é中文", "a\"b\\c"])
STATUS = st.sampled_from(["unpaid", "paid", "unconsumed", "consumed", "cancelled"])
MONEY = st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, TEXT, TEXT, TEXT, st.integers(0, 10**6), MONEY, STATUS)
def test_a_booking_writes_the_encoders_text(a: str, b: str, c: str, d: str, e: str, n: int, price: float,
                                            status: str) -> None:
    row = Booking(book_id=a, shop_id=b, book_time=c, update_time=d, customer_id=e, customer_count=n,
                  book_price=price, status=status)
    assert row.json_text() == dumps(row.model_dump(mode="json"))
    assert dumps(row) == dumps(row.model_dump(mode="json"))


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, TEXT, TEXT, TEXT, st.integers(0, 10**6), STATUS)
def test_a_reservation_writes_the_encoders_text(a: str, b: str, c: str, d: str, e: str, n: int, status: str) -> None:
    row = Reservation(reservation_id=a, shop_id=b, reservation_time=c, update_time=d, customer_id=e,
                      customer_count=n, status=status)
    assert row.json_text() == dumps(row.model_dump(mode="json"))


def test_a_row_the_writer_cannot_vouch_for_goes_to_the_encoder() -> None:
    row = Booking(book_id="B1", shop_id="S1", book_time="2025-01-01 12:00", customer_id="U1", customer_count=2,
                  book_price=1.5, status="paid")
    odd = row.model_copy(update={"book_price": math.inf})  # not a finite float: the encoder's own text
    assert odd.json_text() is None


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, TEXT, TEXT, MONEY, TEXT, TEXT, st.integers(0, 10**6))
def test_payout_and_refund_results_write_the_encoders_text(a: str, b: str, c: str, d: str, amount: float, key: str,
                                                            time: str, step: int) -> None:
    payout = Payout(id=a, merchant_id=b, account_id=c, bank_account_id=d, amount=amount, idempotency_key=key,
                    time=time, step=step)
    refund = Refund(id=a, payment_id=b, amount=amount, idempotency_key=key, time=time, step=step)
    for out, write in (({"payout": payout, "idempotent_replay": False}, _payout_json),
                       ({"refund": refund, "idempotent_replay": False}, _refund_json)):
        assert write(out) == dumps(out)
    assert _payout_json({"payout": payout, "idempotent_replay": True}) == dumps({"payout": payout,
                                                                                  "idempotent_replay": True})


CALL = st.tuples(st.sampled_from(["get_order", "get_shop", "pay"]),
                 st.dictionaries(st.sampled_from(["order_id", "shop_id", "n"]),
                                 st.sampled_from(["O1", "O2", "S1", ""]) | st.integers(0, 3), max_size=2),
                 st.sampled_from(["executed", "refused"]), st.booleans())


def _reference(calls: list[tuple[str, dict[str, Any], str, bool]], tool: str, value: str) -> bool:
    """The set the index replaced: (name, "") and (name, v) for each string argument of an executed call."""
    seen = set()
    for name, args, outcome, _ in calls:
        if outcome == "executed":
            seen.add((name, ""))
            seen.update((name, v) for v in args.values() if type(v) is str)
    return (tool, value) in seen


@settings(max_examples=300, deadline=None)
@given(st.lists(CALL, max_size=12), st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["get_order", "pay"]),
                                                       st.sampled_from(["", "O1", "S1", "O2"])), max_size=8))
def test_called_answers_as_the_set_it_replaced(calls, questions) -> None:
    # calls logged by ``add_call`` (noted at once) or ``append`` (caught up on by the next question), and
    # questions asked between them, repeated: a remembered yes must stay true, a no must not stick
    h = History()
    logged: list[tuple[str, dict[str, Any], str, bool]] = []
    asked = sorted(questions)
    for i, call in enumerate([*calls, None]):
        for at, tool, value in asked:
            if at == i:
                assert h.called(tool, value) is _reference(logged, tool, value), (logged, tool, value)
        if call is None:
            break
        name, args, outcome, direct = call
        if direct:
            h.add_call(i, "", name, args, outcome, "", f"c{i}")  # type: ignore[arg-type]
        else:
            h.append(step=i, time="", kind="tool_call", role="assistant", name=name, arguments=args, outcome=outcome,
                     content="", call_id=f"c{i}")
        logged.append(call)

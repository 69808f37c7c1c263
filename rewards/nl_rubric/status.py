"""Status items: a record that must end cancelled, or paid.

The kind
    An item that asks to cancel an order, a booking or a reservation, or says what its status
    should be. It is read on the item's requirement (the text after its last "so / 所以"), before
    process demands and the other kinds (``compile._compile_item``).

The grammar
    cancelled: the item starts with the cancelling ("(successfully / please / need to / must / the
    agent should) cancel ...", "(成功 / 需要 / 请)取消..."), or says "需要将 / 应将 ... 取消", or ends
    in a status phrase ("(the order) status should be (changed / updated) to cancelled", "...
    should be cancelled", "订单状态应变更为已取消"). The record is the one whose id the item names
    (one known record id at most), else the record the rest of the words are ``about``. Anything
    more ("cancel ... and re-order", "取消后重新下单"), a negation ("do not cancel", "不要取消"),
    a condition ("if ...", "如果"), or cancelling said any other way leaves the item to the judge.
    paid: "<record> (status) should / must be (completed and) paid", "<record>应(完成)支付/付款".

Examples
    "Successfully cancel the taxi booking with id B2025070401; its status should be cancelled"
    "Cancel the order with order ID M0000002O07"
    "The bubble tea order status should be cancelled"
    "The hotel reservation should be paid"
    "成功取消用户的蛋糕订单，订单状态应变更为已取消"
    "需要将order_id为M0000002O07的订单取消"
    "烧烤订单应完成支付"

The spec: ``StatusSpec`` (``cancelled`` or ``paid``; the record id when named). How it is checked
(``status_holds``): the record's status read as one of cancelled / unpaid / paid (any status but
"cancelled" and "unpaid" counts as paid: completed, unconsumed...) is the one asked.
"""

from __future__ import annotations

import re
from typing import Literal

from .text import _Unclear
from .world import ItemContext, RecordFacts, _Spec


class StatusSpec(_Spec):
    """The record (``record_id`` when the item names it) is cancelled, or paid."""

    kind: Literal["status"] = "status"
    status: Literal["cancelled", "paid"]
    record_id: str = ""


def status_holds(spec: StatusSpec, record: RecordFacts) -> bool:
    cls = "cancelled" if record.status == "cancelled" else "unpaid" if record.status == "unpaid" else "paid"
    return cls == spec.status


# ----- the grammar ----------------------------------------------------------------------------------
_CANCEL = re.compile(r"\bcancel(?:l?ed|l?ing|lation)?\b|取消")
_STATUS_TAIL = re.compile(
    r"(?:the )?(?:order |reservation |booking |appointment )?(?:status )?(?:(?:should|must) (?:be )?|is |has been |was )?"
    r"(?:changed |updated |modified |set )?(?:to )?(?:be )?(?:cancell?ed|'cancell?ed')(?: status| state)?$"
    r"|订单(?:的)?(?:最新)?状态(?:应|应该)?(?:变更|更新|修改|改|设置)?(?:为|成)?(?:cancelled|已取消|取消)$"
    r"|状态(?:应|应该)?(?:变更|更新|修改|改)?(?:为|成)?(?:cancelled|已取消)$"
    r"|(?:应该|应当|应|需要|需|须|必须|务必|要)(?:被)?取消(?:掉)?$")
_MORE_WORK = re.compile(r"\b(?:and|then|also)\b (?:re-?order|place|book|reserve|make|create|order|buy|purchase|select|"
                        r"choose|pay)|重新|再下|并(?:且)?(?:重新|下单|预约|预订|支付)|然后|之后再")


def _status_item(t: str, ctx: ItemContext) -> StatusSpec | None:
    """"Successfully cancel the ... order with id X, the status should be cancelled", "取消...订单":
    the record (by its id when the item gives one) is cancelled; "... should be paid": paid. An
    item that speaks of cancelling in any other way is ``_Unclear``."""
    if _MORE_WORK.search(t):
        if _CANCEL.search(t):
            raise _Unclear
        return None
    ids = [i for i in ctx.record_ids if i and i.casefold() in t]
    ids = [i for i in ids if not any(i != j and i.casefold() in j.casefold() for j in ids)]
    cancel = _CANCEL.search(t)
    if cancel is None:
        m = re.match(r"^(?P<s>.+?) (?:status )?(?:should|must) be (?:paid|completed and paid)$|^(?P<z>.+?)(?:应|应该|必须)"
                     r"(?:完成)?(?:支付|付款)$", t)
        if m is None:
            return None
        return StatusSpec(status="paid", about=m.group("s") or m.group("z") or "")
    if len(ids) > 1:
        raise _Unclear
    head = t[:cancel.start()]
    starts = re.fullmatch(r"(?:(?:successfully|please|need to|needs to|should|must|the agent should|agent should) )?",
                          head.lstrip()) is not None or re.fullmatch(r"(?:成功|需要|需|须|必须|务必|应|应该|应当|请|已)?", head.strip()) is not None
    zh_to = re.search(r"需要将|应将|将", head) and re.search(r"取消$", t)
    tail = _STATUS_TAIL.search(t)
    if not (starts or zh_to or tail):
        raise _Unclear
    if re.search(r"\b(?:not|don't|never)\b|不要|不能|不应|不得|不可|切勿|勿|别|禁止|无需|不需要|不必|不用", t):
        raise _Unclear  # "不要取消", "状态不应变更为已取消": not this demand
    if re.search(r"\b(?:if|unless)\b|如果|若", t):
        raise _Unclear
    about = re.sub(r"\b(?:successfully|cancel(?:l?ed)?|the status.*$|order status.*$)\b|成功|取消|订单状态.*$", " ", t)
    return StatusSpec(status="cancelled", record_id=ids[0] if ids else "", about=" ".join(about.split()))

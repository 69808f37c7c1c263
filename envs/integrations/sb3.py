"""stable-baselines3 adapter: a menu of tool calls as ``Discrete(n)``, features as ``Box``.

servicegym envs speak text (``UnicodeText`` spaces), which no SB3 algorithm accepts. This module
turns ``servicegym/Delivery-v0`` into an env SB3 can train on, without hiding anything an agent
could not see:

- ``ToolMenuWrapper(env)``: ``Discrete(n)`` actions. At every step it builds a *menu* of
  candidate actions from what the agent has seen so far (the system prompt, the user's
  messages and the tool results in the observations; never ``env.unwrapped.task``, its golden
  actions or its rubric, and never the world itself), and plays the chosen slot as the action
  string. ``action_masks()`` says which slots can be filled now (for sb3_contrib's
  ``MaskablePPO``).
- ``FeatureObservation(env)``: ``Box`` float32 features of the same seen state (see
  ``FeatureObservation.feature_names``).
- ``make_sb3_env(...)``, ``check_sb3_env(env)``: build a wrapped env; fail with a clear message
  when a raw text env is handed to SB3.
- ``train(...)``: MaskablePPO (or PPO) on an easy delivery level, evaluated on held-out tasks
  against a random policy over the same menu; saves the learning curve as a PNG.

## The menu

A slot is a fixed (template, rank) pair, so the same slot means the same kind of action in
every episode. Templates, in slot order (``K = max_candidates`` products, ``J = max_orders``
orders):

==================  ===  ==============================================================
template            n    action (arguments filled from what has been seen)
==================  ===  ==============================================================
profile             1    ``get_user_historical_behaviors()``
search              1    ``delivery_product_search_recommend(keywords)``: the content
                         words of the user's request (first sentence of the opening
                         with content words, minus common function words)
ask                 1    one message asking about party size, address, time, budget,
                         diet, store preference, distance, dish option and notes
store_info[k]       K    ``get_delivery_store_info`` of candidate k's store
geocode             1    ``address_to_longitude_latitude(delivery address)``
find_unpaid         1    ``search_delivery_orders(user_id, "unpaid")`` (user id from the
                         system prompt)
order_status[j]     J    ``get_delivery_order_status`` of seen order j
cancel[j]           J    ``cancel_delivery_order`` of seen order j
propose[k]          K    "I found <dish> at <store> for <price> yuan each. Shall I place
                         the order?"
create[k]           K    ``create_delivery_order`` of candidate k (below)
pay                 1    ``pay_delivery_order`` of the newest created, unpaid order
report              1    "Your order has been placed and paid. It comes to <total> yuan
                         in total." (total from the created orders' results)
stop                1    ``###STOP###``
==================  ===  ==============================================================

Candidates are the products seen in product-search results, ranked by their *fit* to what the
user has said (``_Seen.fit``: request words matched, stated constraints known to hold, store
tags the user echoed, minus constraints known to be broken and a clash with a stated diet;
an unchecked constraint counts 0, so store lookups and geocoding change the ranking), then by
the tool's relevance, then by product id (never catalogue order, which a generator could
correlate with the answer). Orders are those seen in order-search or status results that the agent did not create,
in order of first sight. ``create[k]`` fills: quantity = the last party size or portion count
the user stated ("for 3 people", "make it 4 portions"), else 1; address = the latest known
address (from the profile) the user quoted, else the profile's office or home address by the
latest of those words the user said; dispatch time = now, or, when the user gave a window
("between 12:30 and 13:00") and the store's and the address's coordinates have been seen, the
time that lands the order 5 minutes into the window (VitaBench's delivery-time formula);
attribute = the product's option the user named (longest match); note = the user's sentence
that asks for a note.

A slot is valid (mask true) when its arguments can be filled from what was seen, and, for a
read-only call or a message, when that exact action has not been sent before (its answer is
already in the conversation). ``cancel[j]`` is offered once order j's status has been seen and
is cancellable (the tool's own pre-condition); ``pay`` once a created order is unpaid;
``report`` once an order was created; ``search`` needs request words; ``ask`` is offered once.
A masked slot, if played anyway, is sent as the message "Let me check that." (a real turn: the
env never raises, the step counts).

Only the delivery domain has a menu (its tool names); another env is a ``ValueError``.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from servicegym.envs.environments.spaces import UnicodeText
from servicegym.world_state.core import TIME_FORMAT, haversine_m
from servicegym.world_state.delivery.tools import CANCELLABLE, delivery_minutes

__all__ = [
    "ToolMenuWrapper", "FeatureObservation", "make_sb3_env", "check_sb3_env", "SB3EnvError", "train",
    "evaluate", "feature_names",
]

STOP = "###STOP###"
ASK = ("Happy to help. A few questions first: how many people is it for, and which address should it go to? "
       "By what time should it arrive? What is your budget? Do you have any dietary restrictions or allergies? "
       "Any preference about the store's rating or service? How far away may the store be? "
       "Which option or flavor should it be? Any note or special request for the restaurant?")
FALLBACK = "Let me check that."
_FUNCTION_WORDS = frozenset(
    "a an the and or but so to of for in on at by with from it its is are be been was i i'm i've i'd me my "
    "you your could would can will please some any hi hello hey there help order get need want like today "
    "feels kind day craving all delivered deliver delivery quickly starving send office home also just "
    "thanks thank yes ok okay".split()
)
_BLOCK = re.compile(r'<(tool_result|tool_error) name="([^"]*)" call_id="[^"]*">(.*?)</\1>', re.S)
_USER = re.compile(r"<user>(.*?)</user>", re.S)
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_NEGATION = re.compile(r"allerg|don't eat|do not eat|avoid|intoleran|can't handle|can't eat|\bno\b|nothing with")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.casefold())


def _stem(w: str) -> str:
    return w[:5]


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _words(text) if len(w) >= 3}


def _call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, TIME_FORMAT)
    except (TypeError, ValueError):
        return None


class _Seen:
    """What the agent has seen in one episode: parsed from the system prompt, the user's
    messages and the tool results, never from the task or the world."""

    def __init__(self, system_prompt: str, opening: str) -> None:
        m = re.search(r"user's id: ([^\s.]+)", system_prompt) or re.search(r"用户id：([^\s。]+)", system_prompt)
        self.user_id = m.group(1) if m else ""
        m = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", system_prompt)
        self.now = _parse_time(m.group(1)) if m else None
        self.user_msgs: list[str] = [opening]
        self.profile: dict[str, Any] | None = None
        self.products: dict[str, dict[str, Any]] = {}
        self.stores: dict[str, dict[str, Any]] = {}
        self.coords: dict[str, tuple[float, float]] = {}
        self.orders: dict[str, dict[str, Any]] = {}  # other orders, by first sight
        self.status_seen: set[str] = set()
        self.created: list[dict[str, Any]] = []
        self.sent: set[str] = set()
        self.counts: dict[str, int] = {}
        self.last_template = ""
        self.last_ok = 1.0
        self.errors = 0
        self.proposed = False
        self.confirmed = False
        self.reported = False
        self.request = self._request_words(opening)

    @staticmethod
    def _request_words(opening: str) -> list[str]:
        for sent in _SENT.split(opening):
            kws = [w for w in _words(sent) if len(w) > 2 and w not in _FUNCTION_WORDS]
            if kws:
                return kws
        return []

    # ----- updates ------------------------------------------------------------------------
    def absorb(self, obs: str, template: str, proposal: bool) -> None:
        ok = 1.0
        for kind, name, body in _BLOCK.findall(obs):
            if kind == "tool_error":
                ok = 0.0
                self.errors += 1
                continue
            try:
                data = json.loads(body)
            except json.JSONDecodeError:
                continue
            self._absorb_result(name, data)
        replies = _USER.findall(obs)
        for r in replies:
            self.user_msgs.append(r)
            if proposal and re.search(r"\b(yes|ok|go ahead|do it|let's do)\b", r.casefold()):
                self.confirmed = True
        if "<error>" in obs:
            ok = 0.0
        self.last_ok = ok

    def _absorb_result(self, name: str, data: Any) -> None:
        if name == "get_user_historical_behaviors" and isinstance(data, dict):
            self.profile = data
        elif name == "delivery_product_search_recommend" and isinstance(data, list):
            for p in data:
                if isinstance(p, dict) and "product_id" in p:
                    old = self.products.get(p["product_id"], {})
                    self.products[p["product_id"]] = {**p, "relevance": max(p.get("relevance", 0), old.get("relevance", 0))}
        elif name == "get_delivery_store_info" and isinstance(data, dict) and "store_id" in data:
            self.stores[data["store_id"]] = data
        elif name == "address_to_longitude_latitude" and isinstance(data, list) and len(data) == 2:
            self.coords[self._pending_address] = (float(data[0]), float(data[1]))
        elif name == "create_delivery_order" and isinstance(data, dict) and "order_id" in data:
            self.created.append(data)
            if data.get("location"):
                loc = data["location"]
                self.coords.setdefault(loc.get("address", ""), (loc.get("longitude", 0.0), loc.get("latitude", 0.0)))
        elif name == "pay_delivery_order" and isinstance(data, str):
            for o in self.created:
                if o["order_id"] in data:
                    o["status"] = "paid"
        elif name == "search_delivery_orders" and isinstance(data, list):
            for o in data:
                if isinstance(o, dict) and "order_id" in o and not self._is_created(o["order_id"]):
                    self.orders.setdefault(o["order_id"], {}).update(o)
                    self.status_seen.add(o["order_id"])
        elif name == "get_delivery_order_status" and isinstance(data, dict) and "order_id" in data:
            oid = data["order_id"]
            if not self._is_created(oid):
                self.orders.setdefault(oid, {"order_id": oid}).update(status=data.get("status"))
                self.status_seen.add(oid)
        elif name == "cancel_delivery_order" and isinstance(data, str):
            for oid, o in self.orders.items():
                if oid in data:
                    o["status"] = "cancelled"

    _pending_address = ""

    def _is_created(self, oid: str) -> bool:
        return any(o["order_id"] == oid for o in self.created)

    # ----- what the user said -------------------------------------------------------------
    @property
    def user_text(self) -> str:
        return " ".join(self.user_msgs)

    def sentences(self) -> list[str]:
        return [s for m in self.user_msgs for s in _SENT.split(m)]

    def quantity(self) -> int | None:
        hits = re.findall(r"(?:for|make it) (\d+) (?:people|persons|portions)", self.user_text)
        return int(hits[-1]) if hits else None

    def budget(self) -> float | None:
        hits = re.findall(r"(\d+(?:\.\d+)?) yuan", " ".join(s for s in self.sentences() if re.search(r"spend|budget", s)))
        return float(hits[-1]) if hits else None

    def min_rating(self) -> float | None:
        hits = re.findall(r"rated (\d(?:\.\d)?)", self.user_text)
        return float(hits[-1]) if hits else None

    def max_distance_m(self) -> float | None:
        hits = re.findall(r"within (\d+(?:\.\d+)?) ?km", self.user_text)
        return float(hits[-1]) * 1000 if hits else None

    def window(self) -> tuple[datetime | None, datetime | None]:
        if self.now is None:
            return None, None
        day = self.now.strftime("%Y-%m-%d")

        def at(hhmm: str) -> datetime | None:
            return _parse_time(f"{day} {hhmm}:00")

        m = re.findall(r"between (\d\d:\d\d) and (\d\d:\d\d)", self.user_text)
        if m:
            return at(m[-1][0]), at(m[-1][1])
        m = re.findall(r"arrive by (\d\d:\d\d)", self.user_text)
        return (None, at(m[-1])) if m else (None, None)

    def diet_stems(self) -> set[str]:
        return set().union(*[_stems(s) for s in self.sentences() if _NEGATION.search(s.casefold())] or [set()])

    def preference_stems(self) -> set[str]:
        """Stems of what the user said besides the request sentence itself."""
        rest = [s for s in self.sentences() if not self.request or self._request_words(s) != self.request]
        return _stems(" ".join(rest))

    def note(self) -> str:
        notes = [s for s in self.sentences() if re.search(r"\bnote\b", s.casefold())]
        return notes[-1] if notes else ""

    def attribute(self, product: dict[str, Any]) -> str:
        text = self.user_text.casefold()
        for a in sorted(product.get("attributes", []), key=len, reverse=True):
            if a and a.casefold() in text:
                return a
        return ""

    def address(self) -> str | None:
        if not self.profile:
            return None
        home, work = self.profile.get("home address"), self.profile.get("work address")
        known = [a for a in (home, work) if a]
        for msg in reversed(self.user_msgs):
            quoted = [a for a in known if a in msg]
            if quoted:
                return max(quoted, key=msg.rfind)
            words = re.findall(r"\b(office|home)\b", msg.casefold())
            if words:
                return work if words[-1] == "office" else home
        return None

    def mistaken_store(self) -> str:
        m = re.findall(r"order at (.+?) by mistake", self.user_text)
        return m[-1] if m else ""

    # ----- candidates ---------------------------------------------------------------------
    def checks(self, p: dict[str, Any]) -> dict[str, float]:
        """How product ``p`` fares against what the user said, from what has been seen (each in
        [0, 1]; 0 where unknown): the per-candidate features, and the basis of ``fit``."""
        qty = self.quantity() or 1
        budget, rating, max_m = self.budget(), self.min_rating(), self.max_distance_m()
        after, by = self.window()
        addr = self.address()
        request = {_stem(w) for w in self.request}
        store = self.stores.get(p.get("store_id", ""))
        name = {_stem(w) for w in _words(p.get("name", "")) if len(w) >= 3}
        score = float(store.get("score", 0)) if store else 0.0
        prefs = self.preference_stems()
        tag_hits = sum(bool(_stems(t) & prefs) for t in (store.get("tags", []) if store else []))
        total = float(p.get("price", 0)) * qty
        dist = self.distance_m(p, addr)
        arrives = 0.0
        if dist is not None and self.now is not None and (after or by):
            eta = _parse_time(self.dispatch(p, addr)) + timedelta(minutes=delivery_minutes(dist))
            arrives = float((after is None or eta >= after) and (by is None or eta <= by))
        diet = self.diet_stems()
        return {
            "present": 1.0,
            "relevance": float(p.get("relevance", 0)) / 100,
            "request_overlap": len(name & request) / max(1, len(request)),
            "store_seen": float(store is not None),
            "store_score": score / 5,
            "meets_rating": float(store is not None and rating is not None and score >= rating),
            "store_tag_match": min(1.0, tag_hits / 2),
            "price_total_over_budget": min(1.0, total / budget / 2) if budget else 0.0,
            "within_budget": float(budget is not None and total <= budget),
            "diet_conflict": float(any(_stems(t) & diet for t in p.get("tags", []))),
            "distance_km": min(1.0, dist / 10000) if dist is not None else 0.0,
            "within_distance": float(dist is not None and max_m is not None and dist <= max_m),
            "arrives_in_window": arrives,
            "attribute_named": float(bool(self.attribute(p))),
            "proposed": float(any(p.get("name", "") in a and "Shall I" in a for a in self.sent)),
            # what is known to break a stated constraint (the fit's penalties)
            "_fails": float(budget is not None and total > budget) + float(store is not None and rating is not None
                                                                        and score < rating)
            + float(dist is not None and max_m is not None and dist > max_m)
            + float(dist is not None and bool(after or by) and not arrives),
        }

    def fit(self, c: dict[str, float]) -> float:
        """How well a candidate fits what the user said so far: request words matched, stated
        constraints known to hold, store tags the user echoed; minus known violations and a diet
        clash. Unknown checks count 0, so gathering information changes the ranking."""
        return (2 * c["request_overlap"] + c["meets_rating"] + c["within_budget"] + c["within_distance"]
                + c["arrives_in_window"] + c["store_tag_match"] + 0.5 * c["attribute_named"]
                - 3 * c["diet_conflict"] - 2 * c["_fails"])

    def candidates(self, k: int) -> list[dict[str, Any]]:
        """The top ``k`` seen products by fit, then search relevance, then product id."""
        scored = [(self.fit(self.checks(p)), p) for p in self.products.values()]
        scored.sort(key=lambda sp: (-round(sp[0], 6), -float(sp[1].get("relevance", 0)), sp[1]["product_id"]))
        return [p for _, p in scored[:k]]

    def other_orders(self, j: int) -> list[dict[str, Any]]:
        return list(self.orders.values())[:j]

    def distance_m(self, product: dict[str, Any], address: str | None) -> float | None:
        store = self.stores.get(product.get("store_id", ""))
        if store is None or address is None or address not in self.coords:
            return None
        lon, lat = self.coords[address]
        loc = store.get("location") or {}
        return haversine_m(lon, lat, float(loc.get("longitude", 0)), float(loc.get("latitude", 0)))

    def dispatch(self, product: dict[str, Any], address: str | None) -> str:
        now = self.now or datetime(2025, 1, 1)
        after, _ = self.window()
        d = self.distance_m(product, address)
        if after is None or d is None:
            return now.strftime(TIME_FORMAT)
        t = after - timedelta(minutes=delivery_minutes(d)) + timedelta(minutes=5)
        return max(now, t).strftime(TIME_FORMAT)


class ToolMenuWrapper(gym.Wrapper):
    """``Discrete(n)`` over a menu of tool calls and messages built from the seen state (see the
    module docstring for the templates, the argument filling and the masks).

    Args:
        env: a ``servicegym/Delivery-v0`` env (text spaces).
        max_candidates: product slots K per product template (default 4).
        max_orders: order slots J per order template (default 2).

    ``action_masks()`` -> bool array of the valid slots; ``menu()`` -> the action string of every
    slot (None where masked); ``slot_names`` names the slots; ``info["menu_template"]`` is the
    template played.
    """

    def __init__(self, env: gym.Env, max_candidates: int = 4, max_orders: int = 2) -> None:
        super().__init__(env)
        base = env.unwrapped
        if getattr(base, "domain", None) != "delivery":
            raise ValueError(f"ToolMenuWrapper builds delivery menus only; got domain {getattr(base, 'domain', None)!r}")
        self.K, self.J = int(max_candidates), int(max_orders)
        names: list[str] = ["profile", "search", "ask"]
        names += [f"store_info[{k}]" for k in range(self.K)]
        names += ["geocode", "find_unpaid"]
        names += [f"order_status[{j}]" for j in range(self.J)] + [f"cancel[{j}]" for j in range(self.J)]
        names += [f"propose[{k}]" for k in range(self.K)] + [f"create[{k}]" for k in range(self.K)]
        names += ["pay", "report", "stop"]
        self.slot_names = names
        self.templates = [n.split("[")[0] for n in names]
        self.template_names = list(dict.fromkeys(self.templates))
        self.action_space = spaces.Discrete(len(names))
        self.seen: _Seen | None = None
        self._menu: list[str | None] = []

    # ----- the menu -----------------------------------------------------------------------
    def _build(self) -> list[str | None]:
        s = self.seen
        assert s is not None
        cands = s.candidates(self.K)
        orders = s.other_orders(self.J)
        addr = s.address()
        menu: list[str | None] = []

        def once(action: str | None) -> str | None:
            return None if action is None or action in s.sent else action

        menu.append(once(_call("get_user_historical_behaviors")))
        menu.append(once(_call("delivery_product_search_recommend", keywords=s.request)) if s.request else None)
        menu.append(once(ASK))
        for k in range(self.K):
            menu.append(once(_call("get_delivery_store_info", store_id=cands[k]["store_id"])) if k < len(cands) else None)
        menu.append(once(_call("address_to_longitude_latitude", address=addr)) if addr else None)
        menu.append(once(_call("search_delivery_orders", user_id=s.user_id, status="unpaid")) if s.user_id else None)
        for j in range(self.J):
            menu.append(once(_call("get_delivery_order_status", order_id=orders[j]["order_id"])) if j < len(orders) else None)
        for j in range(self.J):
            ok = j < len(orders) and orders[j]["order_id"] in s.status_seen and orders[j].get("status") in CANCELLABLE
            menu.append(_call("cancel_delivery_order", order_id=orders[j]["order_id"]) if ok else None)
        for k in range(self.K):
            if k < len(cands):
                p = cands[k]
                menu.append(once(f"I found {p['name']} at {p.get('store_name', 'the store')} for {float(p.get('price', 0)):g} "
                                 "yuan each. Shall I place the order?"))
            else:
                menu.append(None)
        for k in range(self.K):
            if k < len(cands) and addr and s.user_id:
                p = cands[k]
                args: dict[str, Any] = dict(user_id=s.user_id, store_id=p["store_id"], product_ids=[p["product_id"]],
                                            product_cnts=[s.quantity() or 1], address=addr,
                                            dispatch_time=s.dispatch(p, addr))
                attr = s.attribute(p)
                if attr:
                    args["attributes"] = [attr]
                note = s.note()
                if note:
                    args["note"] = note
                menu.append(_call("create_delivery_order", **args))
            else:
                menu.append(None)
        unpaid = [o for o in s.created if o.get("status") == "unpaid"]
        menu.append(_call("pay_delivery_order", order_id=unpaid[-1]["order_id"]) if unpaid else None)
        if s.created:
            paid = all(o.get("status") == "paid" for o in s.created)
            total = sum(float(o.get("total_price", 0)) for o in s.created)
            done = "Your order has been placed and paid." if paid else "Your order has been placed."
            menu.append(once(f"{done} It comes to {total:g} yuan in total."))
        else:
            menu.append(None)
        menu.append(STOP)
        return menu

    def menu(self) -> list[str | None]:
        """The action string of every slot now (None for a masked slot)."""
        return list(self._menu)

    def action_masks(self) -> np.ndarray:
        """Valid slots now, for sb3_contrib's ``MaskablePPO``."""
        return np.array([a is not None for a in self._menu], dtype=bool)

    # ----- gym API ------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.seen = _Seen(info.get("system_prompt", ""), obs)
        self._menu = self._build()
        return obs, info

    def step(self, action: Any):
        if self.seen is None:
            raise RuntimeError("step() before reset()")
        i = int(action)
        valid = 0 <= i < len(self._menu) and self._menu[i] is not None
        template = self.templates[i] if valid else "invalid"
        text = self._menu[i] if valid else FALLBACK
        s = self.seen
        if template == "geocode":
            s._pending_address = s.address() or ""
        s.sent.add(text)
        s.counts[template] = s.counts.get(template, 0) + 1
        s.last_template = template
        obs, reward, terminated, truncated, info = self.env.step(text)
        s.absorb(obs, template, proposal=template == "propose")
        if template == "propose":
            s.proposed = True
        if template == "report":
            s.reported = True
        self._menu = self._build()
        info["menu_template"] = template
        return obs, reward, terminated, truncated, info


# ----- features ---------------------------------------------------------------------------
HASH_DIM = 32
_CAND_FEATURES = (
    "present", "relevance", "request_overlap", "store_seen", "store_score", "meets_rating", "store_tag_match",
    "price_total_over_budget", "within_budget", "diet_conflict", "distance_km", "within_distance", "arrives_in_window",
    "attribute_named", "proposed",
)
_ORDER_FEATURES = ("present", "status_seen", "cancellable", "cancelled", "named_as_mistake")
_FLAGS = (
    "step_fraction", "last_ok", "errors", "profile_seen", "address_known", "geocoded", "asked", "n_candidates",
    "qty_stated", "budget_stated", "rating_stated", "distance_stated", "window_stated", "diet_stated", "note_stated",
    "cancel_requested", "n_orders", "proposed", "confirmed", "n_created", "n_unpaid_created", "reported",
)


def feature_names(K: int, J: int, templates: list[str]) -> list[str]:
    names = list(_FLAGS)
    names += [f"called/{t}" for t in templates] + [f"last/{t}" for t in templates]
    names += [f"cand{k}/{f}" for k in range(K) for f in _CAND_FEATURES]
    names += [f"order{j}/{f}" for j in range(J) for f in _ORDER_FEATURES]
    names += [f"user_words/{i}" for i in range(HASH_DIM)]
    return names


class FeatureObservation(gym.ObservationWrapper):
    """``Box(0, 1, (d,), float32)`` features of what the agent has seen, over a ``ToolMenuWrapper``.

    The vector (names in ``self.feature_names``): flags and counts of the dialogue (step
    fraction, last action ok, profile seen, address known, which of the user's constraints have
    been stated: quantity, budget, rating, distance, window, diet, note, a cancellation request;
    proposed, confirmed, orders created / unpaid, reported); per menu template how often it was
    played (capped at 3, /3) and which was played last (one-hot); per product candidate k
    (``K`` x 15) whether it exists, the search relevance, overlap of its name with the request
    words, its store's score and whether it meets the stated minimum, how many of its store's
    tags the user echoed, price x quantity / budget and within budget, a clash of its tags with
    the user's dietary sentences, distance store -> delivery address (km/10) and within the
    stated limit, whether dispatching as the menu would lands in the stated window, whether the
    user named one of its options, whether it was proposed; per order j (``J`` x 5) present,
    status seen, cancellable, cancelled, and whether its store is the one the user called a
    mistake; and a 32-bin hashed bag of the user's words (crc32, stable across processes).
    Unknown values are 0. Every entry lies in [0, 1].
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        menu = self._menu_wrapper()
        self.K, self.J = menu.K, menu.J
        self.feature_names = feature_names(self.K, self.J, menu.template_names)
        self.observation_space = spaces.Box(0.0, 1.0, (len(self.feature_names),), np.float32)

    def _menu_wrapper(self) -> ToolMenuWrapper:
        env = self.env
        while isinstance(env, gym.Wrapper):
            if isinstance(env, ToolMenuWrapper):
                return env
            env = env.env
        raise ValueError("FeatureObservation needs a ToolMenuWrapper inside it: FeatureObservation(ToolMenuWrapper(env))")

    def observation(self, observation: Any) -> np.ndarray:
        menu = self._menu_wrapper()
        s = menu.seen
        assert s is not None
        base = self.env.unwrapped
        f: list[float] = []
        budget, rating, max_m = s.budget(), s.min_rating(), s.max_distance_m()
        after, by = s.window()
        addr = s.address()
        diet = s.diet_stems()
        cands, orders = s.candidates(self.K), s.other_orders(self.J)
        mistaken = s.mistaken_store()
        f += [
            min(1.0, base._steps / max(1, base.max_steps)), s.last_ok, min(1.0, s.errors / 5), float(s.profile is not None),
            float(addr is not None), float(addr in s.coords if addr else 0.0), float(ASK in s.sent), len(cands) / self.K,
            float(s.quantity() is not None), float(budget is not None), float(rating is not None), float(max_m is not None),
            float(after is not None or by is not None), float(bool(diet)), float(bool(s.note())),
            float(bool(re.search(r"\bcancel", s.user_text.casefold()))), len(orders) / self.J, float(s.proposed),
            float(s.confirmed), min(1.0, len(s.created) / 2), min(1.0, sum(o.get("status") == "unpaid" for o in s.created) / 2),
            float(s.reported),
        ]
        f += [min(3, s.counts.get(t, 0)) / 3 for t in menu.template_names]
        f += [float(s.last_template == t) for t in menu.template_names]
        for k in range(self.K):
            if k >= len(cands):
                f += [0.0] * len(_CAND_FEATURES)
                continue
            c = s.checks(cands[k])
            f += [c[name] for name in _CAND_FEATURES]
        for j in range(self.J):
            if j >= len(orders):
                f += [0.0] * len(_ORDER_FEATURES)
                continue
            o = orders[j]
            stores = {line.get("store_name", "") for line in o.get("products", []) if isinstance(line, dict)}
            f += [1.0, float(o["order_id"] in s.status_seen), float(o.get("status") in CANCELLABLE),
                  float(o.get("status") == "cancelled"), float(bool(mistaken) and mistaken in stores)]
        bag = np.zeros(HASH_DIM, dtype=np.float32)
        for w in set(_words(s.user_text)):
            bag[zlib.crc32(w.encode()) % HASH_DIM] = 1.0
        return np.concatenate([np.asarray(f, dtype=np.float32), bag])


# ----- SB3 glue ---------------------------------------------------------------------------
class SB3EnvError(TypeError):
    """A servicegym text env handed to stable-baselines3 without the adapter."""


HINT = (
    "servicegym envs have text observation and action spaces (UnicodeText), which stable-baselines3 "
    "cannot use. Wrap the env first: FeatureObservation(ToolMenuWrapper(env)), or build one with "
    "servicegym.envs.integrations.sb3.make_sb3_env('servicegym/Delivery-v0', difficulty=0); train with sb3_contrib.MaskablePPO "
    "to use the menu's action masks."
)


def check_sb3_env(env: Any) -> None:
    """Raise ``SB3EnvError`` (with how to wrap it) if ``env`` (or a vec env) has a text space."""
    for name in ("observation_space", "action_space"):
        space = getattr(env, name, None)
        if isinstance(space, UnicodeText) or isinstance(space, spaces.Text):
            raise SB3EnvError(f"{name} is {space!r}. {HINT}")


def make_sb3_env(env_id: str = "servicegym/Delivery-v0", difficulty: int = 0, max_steps: int = 30,
                 max_candidates: int = 4, max_orders: int = 2, partial_credit: bool = False, **kwargs: Any) -> gym.Env:
    """``gym.make(env_id, difficulty=..., max_steps=...)`` wrapped for SB3: menu actions, feature
    observations; with ``partial_credit`` the final reward is the rubric fraction plus the strict
    success (a denser training signal; ``info["success"]`` is unchanged)."""
    import servicegym.envs.environments.registration  # noqa: F401  (registers the ids)

    env = gym.make(env_id, difficulty=difficulty, max_steps=max_steps, **kwargs)
    if partial_credit:
        from servicegym.rewards.wrappers import CustomReward, PartialCreditReward

        env = PartialCreditReward(env)
        env = CustomReward(env, lambda world, history, info: float(bool(info.get("success", False))))
    return FeatureObservation(ToolMenuWrapper(env, max_candidates=max_candidates, max_orders=max_orders))


def _task_id(difficulty: int, split: str, seed: int) -> str:
    return f"delivery/{split}/{seed}/d{difficulty}"


def evaluate(env: gym.Env, act: Callable[[np.ndarray, np.ndarray], int], task_ids: list[str], seed: int = 0) -> float:
    """Success rate of ``act(obs, mask) -> slot`` over ``task_ids`` (one episode each)."""
    wins = 0
    for i, tid in enumerate(task_ids):
        obs, _ = env.reset(seed=seed + i, options={"task_id": tid})
        while True:
            mask = env.get_wrapper_attr("action_masks")()
            obs, _, terminated, truncated, info = env.step(act(obs, mask))
            if terminated or truncated:
                wins += bool(info.get("success", False))
                break
    return wins / max(1, len(task_ids))


def _require_sb3() -> None:
    missing = []
    for mod in ("torch", "stable_baselines3", "sb3_contrib", "matplotlib"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod)
    if missing:
        raise ImportError(f"train() needs {', '.join(missing)}: install a CPU torch (pip install torch==2.13.0) "
                          "and then pip install 'servicegym[rl]'")


def train(env_id: str = "servicegym/Delivery-v0", difficulty: int = 0, total_timesteps: int = 60_000, seed: int = 0,
          out_dir: str | Path = "runs/sb3", algo: str = "maskable_ppo", eval_tasks: int = 50, n_envs: int = 4,
          eval_every: int | None = None, max_steps: int = 30, progress: bool = False, threads: int = 1) -> dict[str, Any]:
    """Train ``algo`` (``maskable_ppo`` or ``ppo``) on ``env_id`` at ``difficulty`` and evaluate it.

    Training tasks are the generator's ``train`` split; evaluation uses ``eval_tasks`` held-out
    tasks of the ``dev`` split (a disjoint generator stream). The random baseline picks uniformly
    among the valid menu slots on the same tasks. Every ``eval_every`` timesteps (default: 8
    points over the run) the greedy policy is evaluated on the held-out tasks; the curve is saved
    as ``out_dir/learning_curve.png`` (and ``curve.json``).

    Returns ``{"success_trained", "success_random", "timesteps", "wall_s", "curve", "png",
    "algo", "difficulty", "eval_tasks"}``.
    """
    import time

    _require_sb3()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    if algo not in ("maskable_ppo", "ppo"):
        raise ValueError(f"algo must be 'maskable_ppo' or 'ppo', got {algo!r}")
    if total_timesteps < 1 or eval_tasks < 1 or n_envs < 1:
        raise ValueError("total_timesteps, eval_tasks and n_envs must be positive")
    torch.set_num_threads(threads)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    def make(rank: int) -> Callable[[], gym.Env]:
        def thunk() -> gym.Env:
            env = make_sb3_env(env_id, difficulty=difficulty, max_steps=max_steps, partial_credit=True)
            env.reset(seed=seed * 1000 + rank)
            return env

        return thunk

    vec = DummyVecEnv([make(i) for i in range(n_envs)])
    check_sb3_env(vec)
    eval_env = make_sb3_env(env_id, difficulty=difficulty, max_steps=max_steps)
    held_out = [_task_id(difficulty, "dev", i) for i in range(eval_tasks)]
    n_steps = 128
    kwargs: dict[str, Any] = dict(n_steps=n_steps, batch_size=128, n_epochs=6, gamma=0.99, gae_lambda=0.95,
                                  learning_rate=1e-3, ent_coef=0.01, seed=seed, verbose=0, device="cpu",
                                  policy_kwargs=dict(net_arch=[64, 64]))
    model = (MaskablePPO if algo == "maskable_ppo" else PPO)("MlpPolicy", vec, **kwargs)

    def trained_act(obs: np.ndarray, mask: np.ndarray) -> int:
        if algo == "maskable_ppo":
            a, _ = model.predict(obs, deterministic=True, action_masks=mask)
        else:
            a, _ = model.predict(obs, deterministic=True)
        return int(a)

    curve: list[tuple[int, float]] = []
    every = eval_every or max(n_steps * n_envs, total_timesteps // 8)

    class Curve(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next = every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                self.next += every
                curve.append((self.num_timesteps, evaluate(eval_env, trained_act, held_out, seed=seed)))
                if progress:
                    print(f"  {self.num_timesteps:>7} steps  held-out success {curve[-1][1]:.2f}", flush=True)
            return True

    curve.append((0, evaluate(eval_env, trained_act, held_out, seed=seed)))
    model.learn(total_timesteps=total_timesteps, callback=Curve(), progress_bar=False)
    final = evaluate(eval_env, trained_act, held_out, seed=seed)
    if curve[-1][0] != model.num_timesteps:
        curve.append((model.num_timesteps, final))
    train_s = time.perf_counter() - start

    rng = np.random.default_rng(seed)

    def random_act(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    baseline = evaluate(eval_env, random_act, held_out, seed=seed)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([c[0] for c in curve], [c[1] for c in curve], marker="o", label=f"{algo} (greedy)")
    ax.axhline(baseline, color="grey", linestyle="--", label="random over the menu")
    ax.set_xlabel("timesteps")
    ax.set_ylabel(f"success on {eval_tasks} held-out tasks")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{env_id} difficulty {difficulty}")
    ax.legend(loc="lower right")
    fig.tight_layout()
    png = out / "learning_curve.png"
    fig.savefig(png, dpi=100)
    plt.close(fig)
    result = {
        "algo": algo, "env_id": env_id, "difficulty": difficulty, "timesteps": int(model.num_timesteps),
        "eval_tasks": eval_tasks, "success_trained": final, "success_random": baseline, "wall_s": round(train_s, 1),
        "curve": curve, "png": str(png),
    }
    (out / "curve.json").write_text(json.dumps(result, indent=1))
    model.save(out / "model")
    vec.close()
    return result

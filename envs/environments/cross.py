"""The cross-scenario environment (VitaBench's headline setting): the 66 tools of delivery,
in-store and online travel at once, one user, one clock and one address book across domains."""

from __future__ import annotations

from servicegym.envs.environments.life import LifeServiceEnv
from servicegym.envs.tasks.generators.cross import DEFAULT_DIFFICULTY, generate_cross_task
from servicegym.envs.tasks.suites import suite_path
from servicegym.world_state.cross import TOOLS, CrossWorld, build_cross_world
from servicegym.world_state.life.spec import WorldSpecError

__all__ = ["CrossScenarioEnv", "build_cross_world", "SUITE_PATH", "WorldSpecError"]

SUITE_PATH = suite_path("cross")



class CrossScenarioEnv(LifeServiceEnv):
    """
    ## Description
    Cross-scenario life services after VitaBench (its headline setting, where the best model
    reached 30% Avg@4): an agent serves one simulated user whose request spans food delivery,
    in-store services and online travel, with all 66 tools of the three VitaBench domain agents
    at once (8 shared + 12 delivery + 16 in-store + 30 travel, VitaBench's names and arguments;
    the ``*_search_recommand`` spellings are accepted). One user, one clock and one address book
    serve every domain: a hotel booked through the travel tools is an address the delivery tools
    can deliver to, and ``get_nearby`` finds stores, shops, hotels and attractions alike. New
    ids never collide across domains (delivery ``D``, in-store ``I``/``B``/``R``, travel
    ``HT``/``AT``/``FL``/``TR``). Each task has its own database: the union of the three
    domains' tables (stores and dishes; shops, packages, bookings and reservations; hotels,
    attractions, flights and trains with dated stock and a payment ledger), the user's orders
    of every type and habits, weather, a static "now". Generated tasks are one trip: a flight or
    train arriving on a date (maybe a named holiday), a hotel near the event's venue from that
    day, an evening visit at a shop near the hotel (package bought, table booked or service
    reserved) at the user's time and after the transfer from the airport or station, and a
    late-night delivery to the hotel on the check-in night; sometimes a mistaken booking to
    cancel, or the visit moved once everything is booked. Tasks come from a seeded generator
    (train split, on demand), a frozen test suite of 100 generated tasks, or a task file
    (project format or a VitaBench cross-domain file).

    ## Action Space
    ``UnicodeText``: the raw assistant completion. A JSON call ``{"name": ..., "arguments": {...}}``
    or a list of them, an OpenAI assistant message with ``tool_calls``, or ``<tool_call>{...}</tool_call>``
    blocks (several allowed, prose around them kept as the assistant's content) call tools;
    anything else is a message to the user. ``###STOP###`` in a message ends the episode.

    ## Observation Space
    ``UnicodeText``: everything new since the last action, each block tagged with its source:
    ``<tool_result name=.. call_id=..>JSON</tool_result>``, ``<tool_error ..>why, and the right
    usage</tool_error>``, ``<user>reply</user>``, ``<error>unreadable action</error>``.
    The first observation is the user's opening request.

    ## Starting State
    The task's initial database and the scripted user's opening message (the destination, the
    event and its venue, the evening out and the delivery wished for; the date, the stay, times,
    distances, classes, budgets and preferences are revealed when asked). ``reset(seed=...)``
    seeds task sampling and the user's phrasing.

    ## Reward
    0 on every step; on the final step 1 if every rubric item holds (strict, all or nothing),
    else 0. Generated tasks' rubric items are code predicates over the final orders, bookings,
    reservations, the ledger and the dialogue: per domain (route and date, seat class,
    travellers, ticket budget, departure time, nights, hotel distance to the venue, rating and
    amenity; package, shop rating, package budget, party; dish, portions, store distance, diet,
    note; counts and payments) and across domains (check-in on the arrival day, the visit at the
    user's time on the arrival day and at least the transfer margin after arriving, the shop
    near the booked hotel, the delivery to the booked hotel on its check-in night), plus the
    user's confirmation before booking, the totals and refunds reported, cancellations and
    untouched orders. VitaBench-file tasks are scored as ``scoring`` says. ``"rubric"``
    (default): the reward is the task's natural-language rubric. Every item read into a code check
    (``rubric/nl_<kind>_<k>``; its verdict ``item/<k>``) must hold, and no write the user never asked
    for may be made (``rubric/no_unrequested_writes``: no record beyond the number the task creates
    of its kind, no change to a record the task never mentions); the gold orders only ground which
    record an item is about, and a deviation from them that the rubric does not mention never fails.
    An item no code reads goes to ``judge="llm"`` when set, else is reported unchecked
    (``rubric_items_unchecked``, coverage ``rubric_nl_coverage``), never passed on the gold's word.
    ``"strict"`` also requires the gold end state: ``required_orders``, ``no_unrequested_orders`` and
    ``untouched_orders`` (the expected state's orders of every type, bookings and reservations matched by content; see ``rewards/vitabench.py``). ``info["score"]`` carries
    both verdicts (``success_rubric``, ``success_strict``); the final ``info["rubric_items"]`` (and a
    rollout record's ``details``) gives each item's text, source (``code``, ``judge``, ``unchecked``),
    check and verdict. Generated tasks score the same in both modes.

    ## Episode End
    Terminated when the user says ``###STOP###`` (its goal reported done) or the agent does.
    Truncated after ``max_steps`` actions or ``max_errors`` failed calls/unreadable actions.

    ## Information
    ``reset``: ``task_id``, ``domain`` (``cross``), ``system_prompt``, ``tools`` (66 OpenAI function
    schemas). Every step: ``step``, ``tool_errors``. Final step: ``termination_reason``
    (``user_stop``, ``agent_stop``, ``max_steps``, ``max_errors``), ``success`` and ``score``
    (``rubric_fraction``, ``rubric_items`` and ``rubric/<item>`` per item).

    ## Arguments
    ```python
    import gymnasium as gym, servicegym
    env = gym.make("servicegym/CrossScenario-v0")                           # generated train tasks
    env = gym.make("servicegym/CrossScenario-v0", split="test")             # the frozen 100-task suite
    env = gym.make("servicegym/CrossScenario-v0", difficulty=5)             # harder generated tasks
    env = gym.make("servicegym/CrossScenario-v0", tasks="cross_tasks.json") # a VitaBench cross-domain file
    ```
    ``tasks`` (path or list of ``Task``), ``split`` (``train``/``test``), ``difficulty`` (0-6,
    default 3: 8 + difficulty reasoning points per task, so 11 by default, near VitaBench's
    cross-scenario mean of 10.3), ``user`` (``scripted``, or ``llm``: the script played by the model at ``llm``), ``judge`` (``code``), ``max_steps``
    (50, VitaBench's limit), ``max_errors`` (10), ``render_mode`` (``ansi``),
    ``check_postconditions`` (verify every write tool's post-conditions),
    ``scoring`` (``rubric`` or ``strict``, see Reward), ``rubric_checks`` (a sidecar file of
    rubric checks compiled by ``servicegym rubrics --compile``; by default one beside the task file
    is picked up), ``strict_tasks`` (fail at a task file's first bad task instead of skipping it; the skipped
    ones are listed in ``env.unwrapped.skipped_tasks``).

    Every servicegym env also takes ``user_tool`` (``True``: the simulated user is also the tool
    ``respond(message)``, whose result is the reply, for trainer loops that end at a reply
    without a tool call), and offers ``astep``/``areset`` (awaitable), ``turn_messages()`` (the
    OpenAI messages a step added) and ``score_keys`` (the components of ``info["score"]`` every
    finished episode reports as floats).

    ## References
    VitaBench (arXiv 2509.26490), tau2-bench.

    ## Version History
    * v0: initial release (generator v1, frozen suite of 100 tasks).
    * v0, before the first published release: action limits at the edge (1 MiB, 32 calls, 256 KiB
      an argument, 1,000-character search queries), lone surrogates replaced by U+FFFD, the
      user reads the first 8,000 characters of a message, ``score_keys`` always present as
      floats; generated tasks, suites and their scores unchanged.
    * v0, before the first published release: VitaBench-file tasks load task by task (bad ones
      skipped with their reason), natural-language time items decide delivery and visit times
      (``rubric/nl_time_<k>``, ``rubric_nl_coverage``) and the other compiled items what they state
      (addresses, stores, features, counts, prices, notes, statuses, look-ups: ``rubric/nl_<kind>_<k>``;
      only the rest goes to ``judge="llm"``), and the tools follow VitaBench of the
      file's release (every match ranked, its caps and cancel rules); generated tasks unchanged.
    * v0, before the first published release: VitaBench-file scoring only: a time item is tied to
      its order through the rubric's other items about its subject, a note negating or reversing
      the requested one fails its note item, look-ups are read from the object of the query, and
      visits said as "scheduled for"/"make a reservation ... for" are time items.
    * v0, before the first published release: VitaBench-file tasks are scored by ``scoring``
      (``"rubric"`` by default: the rubric plus ``no_unrequested_writes``; ``"strict"``: as before,
      with the gold end state), with ``success_rubric``/``success_strict``, ``item/<k>``, the item
      counts and ``info["rubric_items"]``; generated tasks, suites and their scores unchanged.
    """

    domain = "cross"
    tool_specs = TOOLS
    world_cls = CrossWorld
    suite_file = SUITE_PATH.name
    default_difficulty = DEFAULT_DIFFICULTY
    role = {
        "en": "a life-services assistant (travel, dining and in-store services, food delivery)",
        "zh": "一名生活服务助手（出行、到店和外卖）",
    }
    checks = {
        "en": "flights, trains, hotels, shops, stores, products, dates, times, distances and prices",
        "zh": "航班、火车、酒店、商家、商品、日期、时间、距离和价格",
    }
    generator = staticmethod(generate_cross_task)
    lazy_world = True  # a generated task's tables are made on first read (``CrossWorld.prepare`` defers its indexes)

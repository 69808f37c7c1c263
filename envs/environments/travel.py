"""The online-travel environment (VitaBench "OTA")."""

from __future__ import annotations

from servicegym.envs.environments.life import LifeServiceEnv
from servicegym.envs.tasks.generators.travel import DEFAULT_DIFFICULTY, generate_travel_task
from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.suites import suite_path
from servicegym.world_state.life.spec import WorldSpecError, build_lazy_life_world
from servicegym.world_state.travel import KINDS, TOOLS, TravelWorld, build_travel_world

__all__ = ["TravelEnv", "build_travel_world", "SUITE_PATH", "WorldSpecError"]

SUITE_PATH = suite_path("travel")
# the dated products of the catalogues: most of a task's rows, and an episode reads only those of
# the kinds it searches
PRODUCT_TABLES = tuple(kind.products for kind in KINDS.values())


def build_lazy_travel_world(task: Task) -> TravelWorld:
    """``build_life_world(TravelWorld, task.world, vouched=True)`` for a task whose generator
    vouched for its world, with every table made on its first read (``build_lazy_life_world``):
    the dated products (most rows of a task) table by table, the other tables (places, the address
    book, orders, weather: a few dozen rows, validated) all at once. A reset to a new task makes
    no row before its episode reads one (its system prompt and user read none), and the tables,
    once made, are those the eager build makes (tests/test_reset_travel_payments_fast.py)."""
    world, later = task.world_parts()  # the dated products the generator drew: rows made when read
    return build_lazy_life_world(TravelWorld, world, later)  # type: ignore[return-value]


class TravelEnv(LifeServiceEnv):
    """
    ## Description
    Online travel after VitaBench's OTA domain: an agent serves one simulated user who plans a
    trip, using the 38 tools of a VitaBench OTA agent (8 shared + 30 travel, VitaBench's names
    and arguments; the ``*_search_recommand`` spellings are accepted). Each task has its own
    small database: hotels (rating, stars, tags, location) with room types priced and stocked per
    night; attractions with ticket types per day (a day without tickets is a closed day);
    flights and trains with seat classes per date; the user's past orders and habits; a payment
    ledger of travel orders; weather; a static "now". Booking takes stock and cancelling gives it
    back; moving a flight or train to another date settles the price difference (the order is
    unpaid until a dearer date's difference is paid; a cheaper date is refunded). Tasks come from
    a seeded generator (train split, on demand), a frozen test suite of 100 generated tasks, or a
    task file (project format or a VitaBench OTA file).

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
    The task's initial database and the scripted user's opening message (often vague: the
    destination and the purpose; dates, times, classes, budgets and preferences are revealed
    when asked). ``reset(seed=...)`` seeds task sampling and the user's phrasing.

    ## Reward
    0 on every step; on the final step 1 if every rubric item holds (strict, all or nothing),
    else 0. Generated tasks' rubric items are code predicates over the final orders, the ledger
    and the dialogue: route and date, arrival and departure times, seat class, ticket budget,
    travellers, hotel check-in, nights, distance to a venue, rating, amenity, room type, nightly
    price, attraction, visit date, ticket type, payment, order counts, cancellations, untouched
    orders, confirmation before booking, totals and refunds reported. VitaBench-file tasks are scored as ``scoring`` says. ``"rubric"``
    (default): the reward is the task's natural-language rubric. Every item read into a code check
    (``rubric/nl_<kind>_<k>``; its verdict ``item/<k>``) must hold, and no write the user never asked
    for may be made (``rubric/no_unrequested_writes``: no record beyond the number the task creates
    of its kind, no change to a record the task never mentions); the gold orders only ground which
    record an item is about, and a deviation from them that the rubric does not mention never fails.
    An item no code reads goes to ``judge="llm"`` when set, else is reported unchecked
    (``rubric_items_unchecked``, coverage ``rubric_nl_coverage``), never passed on the gold's word.
    ``"strict"`` also requires the gold end state: ``required_orders``, ``no_unrequested_orders`` and
    ``untouched_orders`` (the expected state's orders matched by place, dates, room/seat/ticket type, quantity and status class; see ``rewards/vitabench.py``). ``info["score"]`` carries
    both verdicts (``success_rubric``, ``success_strict``); the final ``info["rubric_items"]`` (and a
    rollout record's ``details``) gives each item's text, source (``code``, ``judge``, ``unchecked``),
    check and verdict. Generated tasks score the same in both modes.

    ## Episode End
    Terminated when the user says ``###STOP###`` (its goal reported done) or the agent does.
    Truncated after ``max_steps`` actions or ``max_errors`` failed calls/unreadable actions.

    ## Information
    ``reset``: ``task_id``, ``domain`` (``travel``), ``system_prompt``, ``tools`` (OpenAI function
    schemas). Every step: ``step``, ``tool_errors``. Final step: ``termination_reason``
    (``user_stop``, ``agent_stop``, ``max_steps``, ``max_errors``), ``success`` and ``score``
    (``rubric_fraction``, ``rubric_items`` and ``rubric/<item>`` per item).

    ## Arguments
    ```python
    import gymnasium as gym, servicegym
    env = gym.make("servicegym/Travel-v0")                           # generated train tasks
    env = gym.make("servicegym/Travel-v0", split="test")             # the frozen 100-task suite
    env = gym.make("servicegym/Travel-v0", difficulty=5)             # harder generated tasks
    env = gym.make("servicegym/Travel-v0", tasks="ota_tasks.json")   # a VitaBench OTA file
    ```
    ``tasks`` (path or list of ``Task``), ``split`` (``train``/``test``), ``difficulty`` (0-6,
    default 3: 4 + 2 x difficulty reasoning points per task, so 10 by default, near VitaBench's
    OTA mean of 9.7), ``user`` (``scripted``, or ``llm``: the script played by the model at ``llm``), ``judge`` (``code``), ``max_steps`` (50,
    VitaBench's limit), ``max_errors`` (10), ``render_mode`` (``ansi``), ``check_postconditions``
    (verify every write tool's post-conditions), ``scoring`` (``rubric`` or ``strict``, see Reward), ``rubric_checks`` (a sidecar file of
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
      (``rubric/nl_time_<k>``, ``rubric_nl_coverage``), and the tools follow VitaBench of the
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

    domain = "travel"
    tool_specs = TOOLS
    world_cls = TravelWorld
    suite_file = SUITE_PATH.name
    default_difficulty = DEFAULT_DIFFICULTY
    role = {"en": "an online travel assistant", "zh": "一名在线旅行助手"}
    checks = {
        "en": "flights, trains, hotels, attractions, dates, times, distances and prices",
        "zh": "航班、火车、酒店、景点、日期、时间、距离和价格",
    }
    generator = staticmethod(generate_travel_task)
    lazy_world = True  # a generated task's tables are made as its generator vouched for them, on first read

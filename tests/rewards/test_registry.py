"""The check registry loads the built-in checks on its first read, not at ``import servicegym``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys, threading
    import gymnasium as gym
    import servicegym
    from servicegym.rewards.rubric import CHECKS, RubricItem, counts_in

    # importing the package (and making an env) does not load the rubric reader
    gym.make("servicegym/Travel-v0")
    assert "servicegym.rewards.nl_rubric" not in sys.modules, "the rubric reader was imported eagerly"

    # first reads from many threads at once: every thread sees every built-in check
    kinds = ("order_count", "required_orders", "nl_price", "untouched")
    seen, barrier = [], threading.Barrier(16)

    def read():
        barrier.wait()
        seen.append(all(CHECKS.get(k) is not None for k in kinds))

    threads = [threading.Thread(target=read) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [True] * 16, seen
    # a strict-only kind counts in strict scoring only, whatever was read first
    item = RubricItem(name="x", kind="required_orders")
    assert counts_in(item, "strict") and not counts_in(item, "rubric")
    print("ok", len(CHECKS))
""")


def test_builtin_checks_load_on_first_read_in_every_thread() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok")


def test_a_strict_only_kind_is_known_before_any_check_is_read() -> None:
    """``counts_in`` (read by the judge) sees the strict-only kinds without a prior read of ``CHECKS``."""
    script = ("from servicegym.rewards.rubric import RubricItem, counts_in\n"
              "assert not counts_in(RubricItem(name='x', kind='no_unrequested_orders'), 'rubric')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


def test_a_users_check_repeating_a_built_in_kind_is_refused_when_registered() -> None:
    """A check registered outside servicegym under a built-in kind's name is refused at once, naming
    both, as when the built-in checks were registered with the package; a new kind is taken."""
    script = textwrap.dedent("""
        import sys
        import servicegym
        from servicegym.rewards import check, CHECKS
        try:
            @check("order_count")
            def mine(view, params):
                return True
        except ValueError as err:
            assert "registered twice" in str(err) and "mine" in str(err), err
        else:
            raise SystemExit("a built-in kind was taken over")
        @check("my_own_kind")
        def other(view, params):
            return True
        assert CHECKS["my_own_kind"] is other and CHECKS["order_count"] is not other
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:] + out.stdout[-500:]

"""Settings every test shares.

Hypothesis runs without its per-example deadline: a wall-clock bound makes a property's
outcome depend on how loaded the machine is (a 6 ms example once took 272 ms on a busy
CI machine and failed as "flaky"). Each property bounds its own work, by the sizes it
draws and by Trio's mock clock where it waits, and ``faulthandler_timeout`` still
reports a test that hangs.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("trimcp", deadline=None)
settings.load_profile("trimcp")

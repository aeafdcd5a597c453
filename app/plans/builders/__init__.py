"""Plan builders, one per kind: pure functions (Machine + parameters → Plan). Nothing here runs
anything. Each raises ``app.plans.geometry.PlanError`` (an ``OpError`` is one) with a message for
the user when the inputs cannot make a sensible plan."""

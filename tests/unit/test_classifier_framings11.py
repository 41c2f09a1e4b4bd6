"""Issue 46 item 11, session 10: a review queue's short framing before the post routes to
moderation in more of the words moderators use ("mod check:", "mods pls look:", "report or
ignore?", "within guidelines?", "verdict?", "过不过：", "该不该删："), and after "->", ">>" or " - "
as well as ":" and "?"; a customer's message that opens with one of those words stays customer
service. Cases and floors: tests/data/cases/classifier_framings11.toml.
"""

from __future__ import annotations

from tests.unit.classifier_helpers import share_tests

test_each_kind_routes_right = share_tests("classifier_framings11.toml")

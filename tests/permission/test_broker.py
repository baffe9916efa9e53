import asyncio

import pytest

from agentls.permission.broker import ApprovalBroker, ApprovalError


async def test_answer_resolves_the_waiter() -> None:
    broker = ApprovalBroker()
    rid = broker.open("s1")
    waiter = asyncio.create_task(broker.wait(rid))
    await asyncio.sleep(0)
    broker.answer("s1", rid, "reject", "use a different name")
    answer = await waiter
    assert answer.decision == "reject"
    assert answer.feedback == "use a different name"


async def test_second_answer_is_refused() -> None:
    broker = ApprovalBroker()
    rid = broker.open("s1")
    waiter = asyncio.create_task(broker.wait(rid))
    broker.answer("s1", rid, "once")
    await waiter
    with pytest.raises(ApprovalError, match="already answered"):
        broker.answer("s1", rid, "once")


async def test_timeout_rejects_and_late_answer_is_refused() -> None:
    broker = ApprovalBroker(timeout_s=0.05)
    rid = broker.open("s1")
    answer = await broker.wait(rid)
    assert answer.decision == "timeout"
    with pytest.raises(ApprovalError, match="expired"):
        broker.answer("s1", rid, "once")


async def test_unknown_bad_decision_and_wrong_session() -> None:
    broker = ApprovalBroker()
    with pytest.raises(ApprovalError, match="unknown requestId"):
        broker.answer("s1", "perm_nope", "once")
    rid = broker.open("s1")
    with pytest.raises(ApprovalError, match="decision must be one of"):
        broker.answer("s1", rid, "maybe")
    with pytest.raises(ApprovalError, match="does not belong"):
        broker.answer("s2", rid, "once")


async def test_cancelled_wait_closes_the_request() -> None:
    broker = ApprovalBroker()
    rid = broker.open("s1")
    waiter = asyncio.create_task(broker.wait(rid))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    with pytest.raises(ApprovalError, match="cancelled"):
        broker.answer("s1", rid, "once")

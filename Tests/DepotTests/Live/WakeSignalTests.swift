import Testing

@testable import Depot

@Suite("WakeSignal: what wakes a watch's iteration", .timeLimit(.minutes(1)))
struct WakeSignalTests {
    @Test("a signal given while nobody waits is kept, one of several: the next wait returns at once")
    func keepsOneSignal() async {
        let signal = WakeSignal()
        signal.signal()
        signal.signal()
        #expect(signal.isPending)
        #expect(await signal.wait())
        // The second signal was not kept on top of the first.
        #expect(!signal.isPending)
    }

    @Test("a signal wakes the iteration that waits")
    func wakesTheWaiter() async {
        let signal = WakeSignal()
        let waiting = Task { await signal.wait() }
        await Self.untilWaiting(signal)
        signal.signal()
        #expect(await waiting.value)
        #expect(!signal.isPending)
    }

    @Test("cancelling the task that waits ends the wait and the signal: later waits return false")
    func cancellingEnds() async {
        let signal = WakeSignal()
        let waiting = Task { await signal.wait() }
        await Self.untilWaiting(signal)
        waiting.cancel()
        #expect(await waiting.value == false)
        signal.signal()
        #expect(await signal.wait() == false)
    }

    @Test("a task cancelled before it waits gets false, unless a signal was kept for it")
    func cancelledBeforeWaiting() async {
        let signal = WakeSignal()
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await signal.wait()
        }
        #expect(await cancelled.value == false)

        let kept = WakeSignal()
        kept.signal()
        let cancelledWithSignal = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await kept.wait()
        }
        #expect(await cancelledWithSignal.value)
    }

    @Test("finish() wakes the iteration that waits with false")
    func finishWakes() async {
        let signal = WakeSignal()
        let waiting = Task { await signal.wait() }
        await Self.untilWaiting(signal)
        signal.finish()
        #expect(await waiting.value == false)
        #expect(await signal.wait() == false)
    }

    /// Returns once a task waits on `signal` (an event the test waits for, not a time).
    private static func untilWaiting(_ signal: WakeSignal) async {
        while !signal.isWaiting { await Task.yield() }
    }
}

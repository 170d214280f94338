import Foundation

/// One comparison: Depot's way and the baseline's way of doing the same work.
struct BenchmarkCase: Sendable {
    /// The name in the table and the JSON, such as `inmemory.findAll.photos5000`.
    let name: String
    /// The ratio Depot / baseline this case should stay under (reported, not enforced).
    let target: Double
    /// Timed rounds by default (each round times one Depot sample and one baseline sample).
    let rounds: Int
    /// What one timed sample is, for the table's legend.
    let sample: String
    /// Requests sent per sample, for the CPU-per-request line of network cases.
    var requestsPerSample: Int? = nil
    /// Whether it needs the loopback server (`--base-url`).
    var needsServer = false
    /// Whether it is a control: no Depot on either side (the "Depot" side is the baseline in
    /// another setup), so its ratio shows how far two runs of the same work land apart, and
    /// it has no target to meet.
    var isControl = false
    /// Builds the two sides (data, backends, sessions), outside any timing.
    let prepare: @Sendable (Environment) async throws -> Sides

    /// The target the report shows: none for a control.
    var targetShown: Double? { isControl ? nil : target }
}

/// The two closures a case times; each call is one sample.
struct Sides: Sendable {
    /// One sample done with Depot.
    let depot: @Sendable () async throws -> Void
    /// The same sample written by hand.
    let baseline: @Sendable () async throws -> Void
    /// Untimed work before each Depot sample (warm-up included): the fresh state one sample
    /// uses up, such as an outbox full of queued writes for a sample that replays them.
    var beforeDepot: (@Sendable () async throws -> Void)? = nil
    /// Untimed work before each baseline sample (warm-up included), as ``beforeDepot``.
    var beforeBaseline: (@Sendable () async throws -> Void)? = nil
    /// Untimed work after each Depot sample (warm-up included), before the next sample of
    /// either side starts: waiting for work the sample left queued off the caller's path,
    /// so that the next sample does not pay for it.
    var settle: (@Sendable () async throws -> Void)? = nil
    /// Untimed work after the last round: extra figures for the report (see ``Figure``), and
    /// cleaning up (temporary files).
    var finish: (@Sendable () async throws -> [Figure])? = nil
}

/// A figure reported next to the ratios: a cost or a size that has no hand-written
/// counterpart to be compared with (milliseconds per durable write, bytes of a file).
struct Figure: Sendable {
    /// The name in the report and the JSON, such as `offline.store.bytes`.
    let name: String
    /// The value, in `unit`.
    let value: Double
    /// `ms`, `bytes`, …
    let unit: String
    /// What exactly was measured, in a few words.
    let detail: String
}

/// Figures measured on their own, not against a baseline.
struct FigureCase: Sendable {
    /// The name `--filter` matches, such as `offline.outbox.write`.
    let name: String
    /// What is measured, for the legend.
    let sample: String
    /// Whether it needs the loopback server (`--base-url`).
    var needsServer = false
    /// Measures and returns the figures.
    let measure: @Sendable (Environment) async throws -> [Figure]
}

/// What the cases may use.
struct Environment: Sendable {
    /// The loopback server's URL, when the network cases run.
    let baseURL: URL?
}

/// A case's measurements.
struct CaseResult: Sendable {
    let name: String
    let depotMedian: Double
    let baselineMedian: Double
    /// The median of the per-round ratios Depot / baseline.
    let ratio: Double
    let target: Double
    let rounds: Int
    let sample: String
    /// Process CPU seconds per request, Depot and baseline, for network cases.
    var cpuPerRequest: (depot: Double, baseline: Double, depotWall: Double, baselineWall: Double)?
    /// Figures the case reported besides its ratio (see ``Sides/finish``).
    var figures: [Figure] = []
    /// Whether the case is a control (``BenchmarkCase/isControl``).
    var isControl = false

    var meetsTarget: Bool { ratio <= target }
}

/// A bad sample: the work did not produce what it should have.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Fails with `message` unless `condition` holds: every sample checks its result, which
/// also keeps the optimizer from discarding the work.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw BenchmarkFailure(message()) }
}

/// Runs cases with interleaved rounds and takes medians.
enum Runner {
    /// Untimed samples of each side before the timed rounds.
    static let warmUpSamples = 3

    /// Measures `benchmark`: warm-up, then `rounds` rounds of one Depot and one baseline
    /// sample each, alternating which goes first (A B, B A, A B, …) so that drift in the
    /// machine's speed falls on both sides alike.
    static func measure(_ benchmark: BenchmarkCase, environment: Environment, rounds: Int) async throws
        -> CaseResult
    {
        let sides = try await benchmark.prepare(environment)
        var measurement: CaseResult
        do {
            measurement = try await measure(benchmark, sides: sides, rounds: rounds)
        } catch {
            // Still clean up (a case's temporary files), then report the failure.
            _ = try? await sides.finish?()
            throw error
        }
        if let finish = sides.finish { measurement.figures = try await finish() }
        return measurement
    }

    /// The warm-up and the timed rounds of `benchmark` on `sides`.
    private static func measure(_ benchmark: BenchmarkCase, sides: Sides, rounds: Int) async throws
        -> CaseResult
    {
        for _ in 0..<warmUpSamples {
            try await sides.beforeDepot?()
            try await sides.depot()
            try await sides.settle?()
            try await sides.beforeBaseline?()
            try await sides.baseline()
        }
        var depot: [Double] = []
        var baseline: [Double] = []
        var depotCPU = 0.0
        var baselineCPU = 0.0
        for round in 0..<rounds {
            if round.isMultiple(of: 2) {
                try await sides.beforeDepot?()
                let (wall, cpu) = try await time(sides.depot)
                depot.append(wall)
                depotCPU += cpu
                try await sides.settle?()
                try await sides.beforeBaseline?()
                let (baseWall, baseCPU) = try await time(sides.baseline)
                baseline.append(baseWall)
                baselineCPU += baseCPU
            } else {
                try await sides.beforeBaseline?()
                let (baseWall, baseCPU) = try await time(sides.baseline)
                baseline.append(baseWall)
                baselineCPU += baseCPU
                try await sides.beforeDepot?()
                let (wall, cpu) = try await time(sides.depot)
                depot.append(wall)
                depotCPU += cpu
                try await sides.settle?()
            }
        }
        let ratios = zip(depot, baseline).map { $0 / $1 }
        var measurement = CaseResult(
            name: benchmark.name, depotMedian: median(depot), baselineMedian: median(baseline),
            ratio: median(ratios), target: benchmark.target, rounds: rounds, sample: benchmark.sample)
        measurement.isControl = benchmark.isControl
        if let requests = benchmark.requestsPerSample {
            let total = Double(requests * rounds)
            measurement.cpuPerRequest = (
                depotCPU / total, baselineCPU / total, depot.reduce(0, +) / total,
                baseline.reduce(0, +) / total
            )
        }
        return measurement
    }

    /// The wall-clock and process-CPU seconds one sample takes.
    private static func time(_ sample: @Sendable () async throws -> Void) async throws -> (Double, Double) {
        let cpuStart = processCPUSeconds()
        let start = DispatchTime.now().uptimeNanoseconds
        try await sample()
        let end = DispatchTime.now().uptimeNanoseconds
        return (Double(end - start) / 1e9, processCPUSeconds() - cpuStart)
    }

    /// The median of `values` (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    /// CPU time used so far by every thread of this process (user + system).
    static func processCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

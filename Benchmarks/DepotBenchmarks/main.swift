import Foundation

// Depot next to what a user would write by hand, measured side by side in one process.
//
//   swift run -c release depot-benchmarks                       # the in-process cases
//   bash scripts/bench                                          # all, with the loopback server
//   swift run -c release depot-benchmarks --json out.json --filter inmemory --rounds 21
//
// Targets are reported, not enforced: the exit status is non-zero only when a case could
// not run (or the arguments are wrong).

enum Help {
    static let usage = """
        usage: depot-benchmarks [--json FILE] [--filter TEXT[,TEXT…]] [--rounds N] [--base-url URL]
                                [--list] [--write-server-data FILE]

          --json FILE       also write the results as JSON to FILE
          --filter TEXT     run only the cases whose name contains one of the comma-separated TEXTs
                            (TEXT$ for exactly that name)
          --rounds N        timed rounds per case (default: each case's own, 31 to 51)
          --base-url URL    the loopback server of `bash scripts/bench`, for the network cases
          --list            print the cases and figures, and exit
          --write-server-data FILE
                            write the photos the server serves (one JSON object per line), and exit
        """
}

/// The command line.
struct Options {
    var json: String?
    var filters: [String] = []
    var rounds: Int?
    var baseURL: URL?
    var list = false
    var serverData: String?

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = remaining.popFirst() else { throw BenchmarkFailure("\(flag) needs a value") }
            return next
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json": json = try value(argument)
            case "--filter": filters += try value(argument).split(separator: ",").map(String.init)
            case "--rounds":
                guard let count = Int(try value(argument)), count > 0 else {
                    throw BenchmarkFailure("--rounds needs a positive integer")
                }
                rounds = count
            case "--base-url":
                let text = try value(argument)
                guard let url = URL(string: text), url.scheme != nil else {
                    throw BenchmarkFailure("--base-url \(text) is not a URL")
                }
                baseURL = url
            case "--list": list = true
            case "--write-server-data": serverData = try value(argument)
            case "-h", "--help":
                print(Help.usage)
                exit(0)
            default: throw BenchmarkFailure("unknown argument \(argument)")
            }
        }
    }
}

/// Every case, in the order they run.
enum Cases {
    static let all =
        InMemoryCases.all + InMemoryQueryCases.all + URLSessionCases.all + FutureCases.all + OfflineCases.all
        + ReplayCases.all + LocalFirstCases.all + LiveCases.all
        + TransferCases.all
    /// The figures measured on their own, after the cases.
    static let figures = InMemoryQueryCases.figures + OfflineCases.figures + ReplayCases.figures
}

/// Whether `name` is selected by `filters` (all names are when there is none).
func matches(_ name: String, _ filters: [String]) -> Bool {
    filters.isEmpty
        || filters.contains { filter in
            // `name$` matches that name only; anything else matches every name containing it.
            filter.hasSuffix("$") ? name == filter.dropLast() : name.contains(filter)
        }
}

/// Runs the selected cases and reports them; returns the exit status.
func runBenchmarks(_ options: Options) async -> Int32 {
    if let path = options.serverData {
        do {
            try Photos.serverLines().write(to: URL(fileURLWithPath: path))
            return 0
        } catch {
            print("error: could not write \(path): \(error)")
            return 1
        }
    }
    let selected = Cases.all.filter { matches($0.name, options.filters) }
    let selectedFigures = Cases.figures.filter { matches($0.name, options.filters) }
    if options.list {
        for benchmark in Cases.all { print(benchmark.name) }
        for figure in Cases.figures { print(figure.name) }
        return 0
    }
    guard !selected.isEmpty || !selectedFigures.isEmpty else {
        print("error: no case matches --filter \(options.filters.joined(separator: ","))")
        return 1
    }
    let environment = Environment(baseURL: options.baseURL)
    var rows: [Report.Row] = []
    var measurements: [CaseResult] = []
    var figures: [Figure] = []
    var failed = false
    if options.baseURL == nil,
        selected.contains(where: \.needsServer) || selectedFigures.contains(where: \.needsServer)
    {
        print(
            "note: the network cases (urlsession.*, offline.online.*, transfer.*) need the loopback server: "
                + "run `bash scripts/bench` (skipped now)")
    }
    for benchmark in selected {
        if benchmark.needsServer && options.baseURL == nil {
            rows.append(
                .skipped(
                    name: benchmark.name, target: benchmark.targetShown, reason: "run bash scripts/bench"))
            continue
        }
        let rounds = options.rounds ?? benchmark.rounds
        do {
            let measurement = try await Runner.measure(benchmark, environment: environment, rounds: rounds)
            print("\(benchmark.name): \(rounds) rounds, ratio " + String(format: "%.3f", measurement.ratio))
            rows.append(.measured(measurement))
            measurements.append(measurement)
        } catch {
            print("\(benchmark.name): failed: \(error)")
            rows.append(
                .skipped(name: benchmark.name, target: benchmark.targetShown, reason: "failed: \(error)"))
            failed = true
        }
    }
    figures += measurements.flatMap(\.figures)
    for figureCase in selectedFigures {
        if figureCase.needsServer && options.baseURL == nil {
            print("\(figureCase.name): skipped: run bash scripts/bench")
            continue
        }
        do {
            let measured = try await figureCase.measure(environment)
            print("\(figureCase.name): measured")
            figures += measured
        } catch {
            print("\(figureCase.name): failed: \(error)")
            failed = true
        }
    }
    print("")
    print(
        Report.table(
            rows,
            legend: selected.map { ($0.name, $0.sample) } + selectedFigures.map { ($0.name, $0.sample) }))
    let cpu = Report.cpuLines(measurements)
    if !cpu.isEmpty {
        print("")
        for line in cpu { print(line) }
    }
    if !figures.isEmpty {
        print("")
        print("Figures (no baseline):")
        for line in Report.figureLines(figures) { print("  " + line) }
    }
    if let path = options.json {
        do {
            try Report.json(measurements, figures: figures).write(to: URL(fileURLWithPath: path))
            print("\nwrote \(path)")
        } catch {
            print("error: could not write \(path): \(error)")
            failed = true
        }
    }
    return failed ? 1 : 0
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    exit(await runBenchmarks(options))
} catch {
    print("error: \(error)\n\n\(Help.usage)")
    exit(2)
}

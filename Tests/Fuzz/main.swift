import Depot
import DepotInMemory
import Foundation

// depot-fuzz: a seeded, bounded mutation fuzzer over everything Depot reads from outside
// (response bodies, db.json documents, request bodies, header values, URI templates).
// See README.md beside this file.

let usage = """
    usage: depot-fuzz [--seconds S] [--seed N] [--target T[,T…]] [--max-repeat N]
                      [--hang-seconds H] [--wait-seconds W] [--slow-seconds C]
                      [--corpus DIR] [--out DIR]
           depot-fuzz --replay FILE --target T        run one input (a corpus file or a saved failure)
           depot-fuzz --target T --seed N --iteration I [--save FILE]
                                                      rebuild and run input I of a run
           depot-fuzz --list                          the targets
    Every run replays the corpus (Tests/Fuzz/Corpus/<folder>/*) first, then mutates it for
    the time budget, split across the targets by weight. Exit 0: every outcome was right;
    1: a wrong outcome, a crash or a stall (the input is saved and printed as base64).
    """

struct Options {
    var seconds = 45.0
    var seed: UInt64 = 1
    var targets: [String] = []
    var maximumRepeat = 5000
    var hangSeconds = 10.0
    var waitSeconds = 5.0
    var slowSeconds = 1.0
    var corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")
        .path
    var out = ".build/fuzz-failures"
    var replay: String?
    var iteration: UInt64?
    var save: String?
    var worker = false
    var workDirectory: String?
    var list = false

    init(_ arguments: [String]) {
        var arguments = arguments[...]
        func value(_ name: String) -> String {
            guard let next = arguments.popFirst() else { Self.exit("\(name) needs a value") }
            return next
        }
        while let argument = arguments.popFirst() {
            switch argument {
            case "--seconds": seconds = Self.require(Double(value(argument)), "--seconds takes a number")
            case "--seed": seed = Self.require(UInt64(value(argument)), "--seed takes an unsigned integer")
            case "--target", "--targets": targets += value(argument).split(separator: ",").map(String.init)
            case "--max-repeat":
                maximumRepeat = Self.require(Int(value(argument)), "--max-repeat takes an integer")
            case "--hang-seconds":
                hangSeconds = Self.require(Double(value(argument)), "--hang-seconds takes a number")
            case "--wait-seconds":
                waitSeconds = Self.require(Double(value(argument)), "--wait-seconds takes a number")
            case "--slow-seconds":
                slowSeconds = Self.require(Double(value(argument)), "--slow-seconds takes a number")
            case "--corpus": corpus = value(argument)
            case "--out": out = value(argument)
            case "--replay": replay = value(argument)
            case "--iteration":
                iteration = Self.require(UInt64(value(argument)), "--iteration takes an integer")
            case "--save": save = value(argument)
            case "--worker": worker = true
            case "--work-dir": workDirectory = value(argument)
            case "--list": list = true
            case "-h", "--help":
                say(usage)
                Foundation.exit(0)
            default: Self.exit("unknown argument \(argument)")
            }
        }
        for name in targets where !Target.all.contains(where: { $0.name == name }) {
            Self.exit("no target \(name); --list shows them")
        }
    }

    static func require<Value>(_ value: Value?, _ message: String) -> Value {
        guard let value else { exit(message) }
        return value
    }

    static func exit(_ message: String) -> Never {
        FileHandle.standardError.write(Data("depot-fuzz: \(message)\n\(usage)\n".utf8))
        Foundation.exit(2)
    }

    var selected: [Target] {
        targets.isEmpty ? Target.all : Target.all.filter { targets.contains($0.name) }
    }

    /// The arguments a worker for `target` gets.
    func workerArguments(_ target: Target, seconds: Double, directory: String) -> [String] {
        [
            "--worker", "--target", target.name, "--seconds", String(seconds), "--seed", String(seed),
            "--max-repeat", String(maximumRepeat), "--hang-seconds", String(hangSeconds),
            "--wait-seconds", String(waitSeconds), "--slow-seconds", String(slowSeconds), "--corpus", corpus,
            "--out", out, "--work-dir", directory,
        ]
    }
}

/// A corpus item: its file name and bytes.
struct Seed {
    var name: String
    var bytes: [UInt8]

    static func load(_ target: Target, from directory: String) -> [Seed] {
        var seeds: [Seed] = []
        for folder in target.corpora {
            let path = (directory as NSString).appendingPathComponent(folder)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
            for name in names where !name.hasPrefix(".") {
                guard
                    let data = FileManager.default.contents(
                        atPath: (path as NSString).appendingPathComponent(name))
                else { continue }
                seeds.append(Seed(name: "\(folder)/\(name)", bytes: Array(data)))
            }
        }
        return seeds
    }
}

/// Runs one input through a target and tells what went wrong.
func runOne(_ target: Target, _ input: [UInt8], _ harness: Harness) -> [String] {
    harness.reset()
    target.run(input, harness)
    return harness.problems + LateProblems.shared.take()
}

/// One target in this process, for its share of the time: the worker the supervisor starts.
func work(_ options: Options, _ target: Target, directory: String) -> Never {
    let started = Date()
    let seeds = Seed.load(target, from: options.corpus)
    guard !seeds.isEmpty else { Options.exit("no corpus for \(target.name) in \(options.corpus)") }
    var mutator = Mutator()
    mutator.maximumRepeat = options.maximumRepeat
    mutator.dictionary = target.dictionary.map { Array($0.utf8) }
    let corpus = seeds.map(\.bytes)
    let current = CurrentInput(path: (directory as NSString).appendingPathComponent("current.bin"))
    let position = IterationFile(path: (directory as NSString).appendingPathComponent("current.label"))
    Watchdog.start(current, target: target.name, bound: options.hangSeconds, failureDirectory: options.out)
    let harness = Harness(waitBound: options.waitSeconds, slowBound: options.slowSeconds)
    var inputs = 0
    var failures = 0

    func check(_ input: [UInt8], _ label: String) {
        let problems = runOne(target, input, harness)
        inputs += 1
        guard !problems.isEmpty else { return }
        failures += 1
        guard failures <= 5 else { return }
        let path = FailureReport.save(input, target: target.name, kind: "wrong", directory: options.out)
        FailureReport.print(
            input, target: target.name,
            headline: "fuzz: FAIL in target \(target.name), \(label): "
                + problems.prefix(5).joined(separator: "; "),
            saved: path)
    }

    for seed in seeds {
        let label = "corpus \(seed.name)"
        position.set(label)
        current.set(seed.bytes, label: label)
        check(seed.bytes, label)
    }
    let corpusCount = inputs
    let deadline = started.addingTimeInterval(options.seconds)
    var iteration: UInt64 = 0
    while Date() < deadline {
        var rng = SplitMix64(seed: options.seed, target: target.name, iteration: iteration)
        let input = mutator.mutate(rng.pick(corpus), corpus: corpus, rng: &rng)
        let label = "seed \(options.seed) iteration \(iteration)"
        position.set(label)
        current.set(input, label: label)
        check(input, label)
        iteration += 1
    }
    Thread.sleep(forTimeInterval: 0.05)  // a late second completion still counts
    let late = LateProblems.shared.take()
    if !late.isEmpty {
        failures += 1
        say(
            "fuzz: FAIL in target \(target.name) after its last input: "
                + late.prefix(5).joined(separator: "; "))
    }
    let elapsed = -started.timeIntervalSinceNow
    say(
        "fuzz: \(target.name): \(inputs) inputs (\(corpusCount) corpus, \(inputs - corpusCount) mutated), "
            + "\(failures) failures, \(String(format: "%.1f", elapsed)) s")
    let result = "\(inputs) \(failures)\n"
    _ = FileManager.default.createFile(
        atPath: (directory as NSString).appendingPathComponent("result-\(target.name)"),
        contents: Data(result.utf8))
    exit(failures == 0 ? 0 : 1)
}

/// Where the worker is (a corpus file or a seed and iteration), rewritten before each input.
final class IterationFile {
    private let descriptor: Int32

    init(path: String) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    }

    func set(_ label: String) {
        guard descriptor >= 0 else { return }
        // Fixed width, so a shorter label needs no truncation.
        let line = Array(
            (label + String(repeating: " ", count: max(0, 120 - label.utf8.count))).utf8.prefix(120))
        _ = line.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}

/// Runs each target in a process of its own, so that a trap in one is reported with its
/// input and the others still run.
func supervise(_ options: Options) -> Never {
    let started = Date()
    let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent(
        "depot-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let targets = options.selected
    say(
        "fuzz: seed \(options.seed), \(options.seconds) s over \(targets.count) targets; "
            + "corpus \(options.corpus); failures to \(options.out)")
    var remainingWeight = targets.reduce(0) { $0 + $1.weight }
    var inputs = 0
    var failures = 0
    guard let executable = Bundle.main.executableURL else { Options.exit("cannot find my own executable") }
    for target in targets {
        let left = options.seconds + started.timeIntervalSinceNow
        let share = max(0.2, left * target.weight / remainingWeight)
        remainingWeight -= target.weight
        let process = Process()
        process.executableURL = executable
        process.arguments = options.workerArguments(target, seconds: share, directory: directory)
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do {
            try process.run()
        } catch {
            Options.exit("cannot start a worker: \(error)")
        }
        let bound = share + options.hangSeconds + 30
        if finished.wait(timeout: .now() + bound) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            finished.wait()
            say("fuzz: HANG in target \(target.name): the worker ran over \(Int(bound)) s and was killed")
        }
        let resultPath = (directory as NSString).appendingPathComponent("result-\(target.name)")
        let result = (try? String(contentsOfFile: resultPath, encoding: .utf8))?.split(separator: " ")
        if let result, result.count == 2, let count = Int(result[0]), let failed = Int(result[1].dropLast()) {
            inputs += count
            failures += failed
            continue
        }
        // No result: the worker trapped, or stalled and was stopped. Its input is on disk.
        failures += 1
        let input = FileManager.default.contents(
            atPath: (directory as NSString).appendingPathComponent("current.bin"))
        let label =
            (try? String(
                contentsOfFile: (directory as NSString).appendingPathComponent("current.label"),
                encoding: .utf8))?
            .trimmingCharacters(in: .whitespaces) ?? "?"
        let reason =
            process.terminationReason == .uncaughtSignal
            ? "signal \(process.terminationStatus)" : "exit \(process.terminationStatus)"
        let bytes = Array(input ?? Data())
        if process.terminationStatus == 3, process.terminationReason == .exit { continue }  // a reported hang
        let path = FailureReport.save(bytes, target: target.name, kind: "crash", directory: options.out)
        FailureReport.print(
            bytes, target: target.name,
            headline: "fuzz: CRASH in target \(target.name) (\(reason)) at \(label) (seed \(options.seed))",
            saved: path)
    }
    let elapsed = String(format: "%.1f", -started.timeIntervalSinceNow)
    say("fuzz: \(inputs) inputs, \(failures) failures (seed \(options.seed), \(elapsed) s)")
    exit(failures == 0 ? 0 : 1)
}

/// Runs one given input through one target, in this process (a trap shows its stack here).
func replay(_ options: Options, file: String) -> Never {
    guard options.targets.count == 1, let target = options.selected.first else {
        Options.exit("--replay needs one --target")
    }
    guard let data = FileManager.default.contents(atPath: file) else { Options.exit("cannot read \(file)") }
    report(options, target, Array(data), label: file)
}

/// Rebuilds input `iteration` of a run (seed, target) and runs it.
func rebuild(_ options: Options, iteration: UInt64) -> Never {
    guard options.targets.count == 1, let target = options.selected.first else {
        Options.exit("--iteration needs one --target")
    }
    let corpus = Seed.load(target, from: options.corpus).map(\.bytes)
    guard !corpus.isEmpty else { Options.exit("no corpus for \(target.name)") }
    var mutator = Mutator()
    mutator.maximumRepeat = options.maximumRepeat
    mutator.dictionary = target.dictionary.map { Array($0.utf8) }
    var rng = SplitMix64(seed: options.seed, target: target.name, iteration: iteration)
    let input = mutator.mutate(rng.pick(corpus), corpus: corpus, rng: &rng)
    if let save = options.save { _ = FileManager.default.createFile(atPath: save, contents: Data(input)) }
    say(
        "fuzz: \(target.name) seed \(options.seed) iteration \(iteration): \(Data(input).base64EncodedString())"
    )
    report(options, target, input, label: "iteration \(iteration)")
}

func report(_ options: Options, _ target: Target, _ input: [UInt8], label: String) -> Never {
    say("fuzz: running \(label) (\(input.count) bytes) through \(target.name)")
    let problems = runOne(
        target, input, Harness(waitBound: options.waitSeconds, slowBound: options.slowSeconds))
    Thread.sleep(forTimeInterval: 0.05)
    let all = problems + LateProblems.shared.take()
    guard all.isEmpty else {
        for problem in all { say("fuzz: FAIL: \(problem)") }
        exit(1)
    }
    say("fuzz: ok: every outcome of \(label) was right")
    exit(0)
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
if options.list {
    for target in Target.all {
        say(
            "\(target.name) (weight \(target.weight), corpus \(target.corpora.joined(separator: ", "))): \(target.summary)"
        )
    }
    exit(0)
}
if let file = options.replay { replay(options, file: file) }
if let iteration = options.iteration { rebuild(options, iteration: iteration) }
if options.worker {
    guard let target = options.selected.first, let directory = options.workDirectory else {
        Options.exit("--worker needs --target and --work-dir")
    }
    work(options, target, directory: directory)
}
supervise(options)

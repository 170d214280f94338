import DepotInMemory
import Foundation

extension SplitMix64 {
    /// The generator for one input: a pure function of the run's seed, the target and the
    /// iteration, so `--seed S --target T --iteration I` rebuilds input I without the others.
    /// (The fuzzer never uses the system's generator, so a seed names the same inputs on every
    /// machine and every run.)
    init(seed: UInt64, target: String, iteration: UInt64) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in target.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        var mixer = SplitMix64(seed: seed ^ hash)
        self.init(seed: mixer.next() ^ (iteration &* 0x9E37_79B9_7F4A_7C15))
        _ = next()
    }

    /// A number in `0..<bound` (`bound` > 0).
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// True with probability `1 / n`.
    mutating func oneIn(_ n: Int) -> Bool {
        below(n) == 0
    }

    mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[below(elements.count)]
    }
}

/// Turns corpus items into new inputs: bit and byte flips, inserted, deleted and duplicated
/// ranges, splices of two items, JSON- and header-significant tokens, and one byte run
/// repeated many times (deep nesting).
struct Mutator {
    /// The largest input the mutator makes (bytes).
    var maximumSize = 64 * 1024
    /// The most times one byte run is repeated; `--max-repeat` lowers it.
    var maximumRepeat = 5000
    /// Tokens worth inserting on top of the shared ones (target-specific words).
    var dictionary: [[UInt8]] = []

    static let tokens: [[UInt8]] = {
        let text: [String] = [
            "[", "]", "{", "}", "\"", "\\", "\\u", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u0000",
            "\\uZZZZ",
            "1e400", "-1e400", "1e-400", "-0", "-0.0", "0.1e", "18446744073709551616", "-9223372036854775809",
            "9223372036854775807", "123456789012345678901234567890", "1.7976931348623157e309", "NaN",
            "Infinity", "null", "true", "false", ",", ":", "\"id\"", "\"id\":", "\"_links\"", "\"_embedded\"",
            "\"href\"", "\"templated\":true", "\"results\"", "\"next\"", "\"count\"", "\"data\"", "{}", "[]",
            "\"\"", "\r\n", "\r", "\n", "\t", " ", "\u{0}", "\u{7f}", "\u{200B}", "\u{301}", "😀", "é",
            "{?", "{+", "{#", "{/", "{;", "{&", "{.", "*}", ":3}", "%", "%zz", "%E2%82", "%00", ";", "rel=",
            "rel=\"next\"", "<", ">", "=", "W/", "*", "\"W/\\\"", "GMT", "realm=", "Bearer ", ", ",
            "Sun, 06 Nov 1994 08:49:37 GMT", "?", "&", "#", "/", "../", "//", "http://", "https://x/",
        ]
        var tokens = text.map { Array($0.utf8) }
        // Bytes that are not UTF-8: a lone continuation, an overlong NUL, a surrogate, a
        // truncated sequence, and byte-order marks.
        tokens += [
            [0xff], [0x80], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xef, 0xbb, 0xbf], [0xff, 0xfe],
        ]
        return tokens
    }()

    private static let runs: [[UInt8]] = ["[", "{", "{\"a\":", "[{\"a\":", "\"", "\\", "[1,", "0", " ", "a"]
        .map {
            Array($0.utf8)
        }

    private static let wrappers: [([UInt8], [UInt8])] = [
        ("[", "]"), ("{\"a\":", "}"), ("[{\"id\":1,\"a\":", "}]"),
    ]
    .map { (Array($0.0.utf8), Array($0.1.utf8)) }

    private static let repeatCounts = [
        2, 3, 8, 16, 100, 255, 256, 257, 500, 511, 512, 513, 514, 1000, 1025, 5000,
    ]

    func mutate(_ item: [UInt8], corpus: [[UInt8]], rng: inout SplitMix64) -> [UInt8] {
        var bytes = item
        var steps = 1
        while steps < 6, rng.oneIn(2) { steps += 1 }
        for _ in 0..<steps { apply(&bytes, corpus: corpus, rng: &rng) }
        if bytes.count > maximumSize { bytes.removeLast(bytes.count - maximumSize) }
        return bytes
    }

    private func apply(_ bytes: inout [UInt8], corpus: [[UInt8]], rng: inout SplitMix64) {
        let position = rng.below(bytes.count + 1)
        switch rng.below(13) {
        case 0 where !bytes.isEmpty:  // flip one bit
            bytes[rng.below(bytes.count)] ^= UInt8(1 << rng.below(8))
        case 1 where !bytes.isEmpty:  // set one byte
            bytes[rng.below(bytes.count)] = UInt8(truncatingIfNeeded: rng.next())
        case 2:  // insert random bytes
            let count = 1 + rng.below(8)
            bytes.insert(
                contentsOf: (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: position)
        case 3 where !bytes.isEmpty:  // delete a range
            let start = rng.below(bytes.count)
            let length = 1 + rng.below(min(32, bytes.count - start))
            bytes.removeSubrange(start..<(start + length))
        case 4 where !bytes.isEmpty:  // duplicate a range somewhere else
            let start = rng.below(bytes.count)
            let length = 1 + rng.below(min(64, bytes.count - start))
            let copy = Array(bytes[start..<(start + length)])
            bytes.insert(contentsOf: copy, at: rng.below(bytes.count + 1))
        case 5 where !corpus.isEmpty:  // splice: a prefix of this item and a suffix of another
            let other = rng.pick(corpus)
            let cut = rng.below(bytes.count + 1)
            let from = rng.below(other.count + 1)
            bytes = Array(bytes[..<cut]) + other[from...]
        case 6, 7:  // a significant token
            let token = !dictionary.isEmpty && rng.oneIn(3) ? rng.pick(dictionary) : rng.pick(Self.tokens)
            bytes.insert(contentsOf: token, at: position)
        case 8:  // one run repeated many times; at the very end a quarter of the time
            var run = rng.pick(Self.runs)
            if rng.oneIn(3), !bytes.isEmpty {
                let start = rng.below(bytes.count)
                run = Array(bytes[start..<min(bytes.count, start + 1 + rng.below(4))])
            }
            let count = min(rng.oneIn(2) ? 2 + rng.below(15) : rng.pick(Self.repeatCounts), maximumRepeat)
            let at = rng.oneIn(4) ? bytes.count : position
            bytes.insert(contentsOf: Array(repeating: run, count: count).joined(), at: at)
        case 9 where !bytes.isEmpty:  // truncate
            bytes.removeLast(bytes.count - rng.below(bytes.count))
        case 10:  // replace a digit run with an extreme number (or add one)
            let digits = bytes.indices.filter { (48...57).contains(bytes[$0]) }
            guard !digits.isEmpty else {
                bytes.insert(contentsOf: Array("18446744073709551616".utf8), at: position)
                return
            }
            let start = rng.pick(digits)
            var end = start
            while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
            let numbers = [
                "0", "-1", "-0", "1e400", "9223372036854775808", "99999999999999999999999", "1.5", "2e9",
            ]
            bytes.replaceSubrange(start..<end, with: Array(rng.pick(numbers).utf8))
        case 11:  // balanced deep nesting around a range: valid JSON stays valid, only deeper
            let (open, close) = rng.pick(Self.wrappers)
            let count = min(rng.oneIn(2) ? 2 + rng.below(30) : rng.pick(Self.repeatCounts), maximumRepeat)
            let start = rng.below(bytes.count + 1)
            let end = start + rng.below(bytes.count - start + 1)
            let inner = bytes[start..<end]
            var wrapped = Array(Array(repeating: open, count: count).joined())
            wrapped += inner
            wrapped += Array(repeating: close, count: count).joined()
            bytes.replaceSubrange(start..<end, with: wrapped)
        default:  // an ASCII byte that matters somewhere
            let specials: [UInt8] = Array("\"\\[]{}<>,;:=/?#&%*+ \t\r\n".utf8) + [0]
            bytes.insert(rng.pick(specials), at: position)
        }
    }
}

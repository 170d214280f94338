import Foundation

/// The table printed at the end of a run, and the JSON file of `--json`.
enum Report {
    /// A row of the table: a measurement, or a case that did not run and why.
    enum Row {
        case measured(CaseResult)
        /// `target` is `nil` for a control (``BenchmarkCase/isControl``).
        case skipped(name: String, target: Double?, reason: String)
    }

    /// The table: one line per case, then the legend of what one sample is.
    static func table(_ rows: [Row], legend: [(name: String, sample: String)]) -> String {
        var lines: [String] = []
        let header = [
            pad("case", 34), pad("Depot", 11, right: true), pad("baseline", 11, right: true),
            pad("ratio", 7, right: true), pad("target", 8, right: true), pad("rounds", 7, right: true), "  ",
        ]
        lines.append(header.joined(separator: " ") + "result")
        lines.append(String(repeating: "-", count: 92))
        for row in rows {
            switch row {
            case .measured(let m):
                let cells = [
                    pad(m.name, 34), pad(seconds(m.depotMedian), 11, right: true),
                    pad(seconds(m.baselineMedian), 11, right: true),
                    pad(String(format: "%.3f", m.ratio), 7, right: true),
                    pad(m.isControl ? "-" : String(format: "≤ %.2f", m.target), 8, right: true),
                    pad(String(m.rounds), 7, right: true),
                    "  ",
                ]
                let result = m.isControl ? "control (no Depot)" : m.meetsTarget ? "met" : "MISSED"
                lines.append(cells.joined(separator: " ") + result)
            case .skipped(let name, let target, let reason):
                let cells = [
                    pad(name, 34), pad("-", 11, right: true), pad("-", 11, right: true),
                    pad("-", 7, right: true),
                    pad(target.map { String(format: "≤ %.2f", $0) } ?? "-", 8, right: true),
                    pad("-", 7, right: true), "  ",
                ]
                lines.append(cells.joined(separator: " ") + "skipped: " + reason)
            }
        }
        lines.append("")
        lines.append("Depot and baseline: median seconds per sample; ratio: median of the per-round ratios.")
        lines.append("One sample:")
        for (name, sample) in legend { lines.append("  \(name): \(sample)") }
        return lines.joined(separator: "\n")
    }

    /// The CPU-per-request lines for the cases that count requests.
    static func cpuLines(_ measurements: [CaseResult]) -> [String] {
        measurements.compactMap { m in
            guard let cpu = m.cpuPerRequest else { return nil }
            return m.name
                + String(
                    format: ": process CPU per request: Depot %.1f µs, baseline %.1f µs "
                        + "(wall per request: Depot %.1f µs, baseline %.1f µs; CPU/wall %.2f and %.2f)",
                    cpu.depot * 1e6, cpu.baseline * 1e6, cpu.depotWall * 1e6, cpu.baselineWall * 1e6,
                    cpu.depot / cpu.depotWall, cpu.baseline / cpu.baselineWall)
        }
    }

    /// The figures' lines: `name: value unit (detail)`.
    static func figureLines(_ figures: [Figure]) -> [String] {
        figures.map { figure in
            "\(figure.name): \(amount(figure.value, figure.unit)) (\(figure.detail))"
        }
    }

    /// `[{"case", "depot_median_s", "baseline_median_s", "ratio", "target", "rounds"}, …]`, one
    /// object per case that ran (a control has `"control": true` and no `"target"`); network
    /// cases that count requests add `depot_cpu_s_per_request` and `baseline_cpu_s_per_request`. Then one object per figure
    /// (the cases' own, then the figure cases'), told apart by its first key:
    /// `{"figure", "value", "unit", "detail"}`.
    static func json(_ measurements: [CaseResult], figures: [Figure] = []) -> Data {
        let objects = measurements.map { m -> String in
            var fields = [
                "\"case\": \(quoted(m.name))",
                "\"depot_median_s\": \(number(m.depotMedian))",
                "\"baseline_median_s\": \(number(m.baselineMedian))",
                "\"ratio\": \(number(m.ratio))",
                m.isControl ? "\"control\": true" : "\"target\": \(number(m.target))",
                "\"rounds\": \(m.rounds)",
            ]
            if let cpu = m.cpuPerRequest {
                fields.append("\"depot_cpu_s_per_request\": \(number(cpu.depot))")
                fields.append("\"baseline_cpu_s_per_request\": \(number(cpu.baseline))")
            }
            return "  {" + fields.joined(separator: ", ") + "}"
        }
        let figureObjects = figures.map { figure in
            "  {\"figure\": \(quoted(figure.name)), \"value\": \(number(figure.value)), "
                + "\"unit\": \(quoted(figure.unit)), \"detail\": \(quoted(figure.detail))}"
        }
        return Data(("[\n" + (objects + figureObjects).joined(separator: ",\n") + "\n]\n").utf8)
    }

    /// A figure's value in its unit: `4.21 ms`, `1,234,567 bytes`, `1,862 entries/s` (bytes and
    /// rates in whole units).
    static func amount(_ value: Double, _ unit: String) -> String {
        guard unit == "bytes" || unit.hasSuffix("/s"), value.isFinite else {
            return String(format: "%.3g \(unit)", value)
        }
        let digits = String(Int(value.rounded()))
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset).isMultiple(of: 3) { grouped.append(",") }
            grouped.append(digit)
        }
        return grouped + " " + unit
    }

    /// Seconds in a readable unit: `12.3 ms`, `4.56 µs`.
    static func seconds(_ value: Double) -> String {
        switch value {
        case ..<1e-6: return String(format: "%.1f ns", value * 1e9)
        case ..<1e-3: return String(format: "%.2f µs", value * 1e6)
        case ..<1: return String(format: "%.2f ms", value * 1e3)
        default: return String(format: "%.3f s", value)
        }
    }

    private static func number(_ value: Double) -> String {
        value.isFinite ? String(format: "%.9g", value) : "null"
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text }
        let space = String(repeating: " ", count: width - count)
        return right ? space + text : text + space
    }
}

import Depot
import Foundation

/// URI templates: line 1 is the template, each further line a variable, `name=value` (a
/// string), `name[]=a,b` (a list) or `name{}=k:v,k2:v2` (pairs).
enum TemplateTarget {
    static let root = URL(string: "https://api.example.com/v1/")!

    static func run(_ input: [UInt8], _ harness: Harness) {
        let fields = lines(input).map(text)
        let template = fields[0]
        var values: [String: URITemplate.Value] = [:]
        var json: [String: JSONValue] = [:]
        for line in fields.dropFirst() {
            guard let equals = line.firstIndex(of: "=") else { continue }
            var name = String(line[..<equals])
            let value = String(line[line.index(after: equals)...])
            if name.hasSuffix("[]") {
                name.removeLast(2)
                let items = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                values[name] = .list(items)
                json[name] = .array(items.map(JSONValue.string))
            } else if name.hasSuffix("{}") {
                name.removeLast(2)
                let pairs = value.split(separator: ",").map { pair in
                    let parts = pair.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                    return (name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
                }
                values[name] = .pairs(pairs)
                json[name] = .object(
                    Dictionary(pairs.map { ($0.name, JSONValue.string($0.value)) }) { a, _ in a })
            } else {
                values[name] = .string(value)
                json[name] = Int(value).map(JSONValue.int) ?? .string(value)
            }
        }
        let start = DispatchTime.now()
        defer { harness.timed("template parsing, expansion and requests", since: start) }
        do {
            let parsed = try URITemplate(template)
            _ = parsed.variableNames
            for expanded in [parsed.expand(values), parsed.expand([:])] {
                harness.check(isURIText(expanded), "expansion \(expanded.debugDescription) is not URI text")
            }
        } catch {
            harness.inspect(error, "URITemplate")
            harness.check(isInvalidRequest(error), "URITemplate failed with \(error)")
        }

        // As a link a client follows: expanded, resolved against the root, sent.
        let backend = FixedBackend(response: BackendResponse(status: 200, body: Data(#"{"id":1}"#.utf8)))
        let client = HypermediaClient(backend: backend, root: root)
        for method in [HTTPMethod.get, .post] {
            let link = Link(rel: "t", href: template, method: method, templated: true, parameters: json)
            do {
                let request = try client.request(for: link, with: json)
                harness.check(
                    !request.path.contains("{"), "an unexpanded path \(request.path.debugDescription)")
            } catch {
                harness.inspect(error, "request(for:)")
                harness.check(isInvalidRequest(error), "request(for:) failed with \(error)")
            }
            let followed = harness.outcome(
                client.follow(link, with: json, as: JSONValue.self), "follow \(method)")
            if case .failure(let error) = followed {
                harness.inspect(error, "follow")
                harness.check(isInvalidRequest(error), "follow failed with \(error)")
            }
        }
    }

    /// RFC 6570 expansions are URI text: ASCII unreserved and reserved characters, and `%`
    /// only as the start of a percent-encoded byte.
    static func isURIText(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else {
                    return false
                }
                index += 3
                continue
            }
            let allowed =
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || "-._~:/?#[]@!$&'()*+,;=".utf8.contains(byte)
            guard allowed else { return false }
            index += 1
        }
        return true
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

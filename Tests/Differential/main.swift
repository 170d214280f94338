import Depot
import DepotInMemory
import Foundation

// depot-inmemory-replay DB_JSON: InMemoryBackend seeded from DB_JSON, driven by lines on stdin, for
// the random differential against a real json-server (Tests/Differential/README.md).
//
// Each line in is a JSON object: {"method": "POST", "path": "posts?x=1", "body": "{...}" or null}
// (the path relative to the backend's base, query string included), or {"reset": true} to seed a
// fresh backend from DB_JSON again. Each line out is {"status": 201, "headers": {...}, "body": "…"}:
// the answer as the network would carry it, success or failure alike.

/// One request read from stdin.
struct Line: Decodable {
    var method: String?
    var path: String?
    var body: String?
    var reset: Bool?
}

/// One answer written to stdout.
struct Answer: Encodable {
    var status: Int
    var headers: [String: String]
    var body: String
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: depot-inmemory-replay DB_JSON\n".utf8))
    exit(2)
}
let seed = try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1]))
var backend = try InMemoryBackend(database: seed)
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]

func answer(_ status: Int, _ headers: HTTPHeaders, _ body: Data) -> Answer {
    var fields: [String: String] = [:]
    for name in ["Content-Type", "X-Total-Count", "Link", "Location"] {
        if let value = headers[name] { fields[name] = value }
    }
    return Answer(status: status, headers: fields, body: String(decoding: body, as: UTF8.self))
}

while let text = readLine(strippingNewline: true) {
    guard let line = try? JSONDecoder().decode(Line.self, from: Data(text.utf8)) else {
        FileHandle.standardError.write(Data("not a request line: \(text)\n".utf8))
        exit(2)
    }
    let out: Answer
    if line.reset == true {
        backend = try InMemoryBackend(database: seed)
        out = Answer(status: 0, headers: [:], body: "")
    } else {
        var headers: HTTPHeaders = [:]
        if line.body != nil { headers["Content-Type"] = "application/json" }
        let request = BackendRequest(
            method: HTTPMethod(rawValue: line.method ?? "GET") ?? .get, path: line.path ?? "",
            headers: headers, body: line.body.map { Data($0.utf8) })
        switch await backend.send(request).result {
        case .success(let response): out = answer(response.status, response.headers, response.body)
        case .failure(let error):
            if let response = error.response {
                out = answer(response.status, response.headers, response.body)
            } else {
                out = Answer(status: -1, headers: [:], body: "\(error)")
            }
        }
    }
    FileHandle.standardOutput.write(try encoder.encode(out) + Data("\n".utf8))
}

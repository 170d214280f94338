import Foundation

/// One challenge from a `WWW-Authenticate` header (RFC 9110 §11.6.1), such as
/// `Bearer realm="api", error="invalid_token"`.
public struct AuthenticationChallenge: Sendable, Hashable {
    /// The scheme, e.g. `Basic` or `Bearer`.
    public var scheme: String
    /// The parameters, names lowercased (`realm`, `error`, …).
    public var parameters: [String: String]
    /// The token68 form some schemes use instead of parameters.
    public var token: String?

    /// Creates a challenge.
    public init(scheme: String, parameters: [String: String] = [:], token: String? = nil) {
        self.scheme = scheme
        self.parameters = parameters
        self.token = token
    }

    /// The `realm` parameter, when present.
    public var realm: String? {
        parameters["realm"]
    }

    /// The challenges in one `WWW-Authenticate` header value; an unreadable value
    /// gives what could be read before the fault.
    public static func parse(_ value: String) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        var input = Substring(value)
        while true {
            input = input.drop { $0 == " " || $0 == "," }
            let scheme = input.prefix { !$0.isWhitespace && $0 != "," }
            guard !scheme.isEmpty, !scheme.contains("=") else { break }
            input = input.dropFirst(scheme.count)
            var challenge = AuthenticationChallenge(scheme: String(scheme))
            if let token = token68(after: &input) {
                challenge.token = token
                challenges.append(challenge)
                continue
            }
            // Parameters: name=value or name="quoted", separated by commas, until a
            // word that is not followed by "=" starts the next challenge.
            while true {
                let rest = input.drop { $0 == " " || $0 == "," }
                let name = rest.prefix { $0 != "=" && $0 != " " && $0 != "," }
                let afterName = rest.dropFirst(name.count).drop { $0 == " " }
                guard !name.isEmpty, afterName.first == "=" else { break }
                var valuePart = afterName.dropFirst().drop { $0 == " " }
                // A token68 ends in "=" padding: `Negotiate abc==`.
                if valuePart.isEmpty || valuePart.first == "," {
                    if challenge.parameters.isEmpty, challenge.token == nil {
                        challenge.token = String(rest.prefix { $0 != "," && $0 != " " })
                        input = rest.drop { $0 != "," && $0 != " " }
                    }
                    break
                }
                let parameterValue: String
                if valuePart.first == "\"" {
                    valuePart = valuePart.dropFirst()
                    var text = ""
                    var escaped = false
                    var consumed = 0
                    for character in valuePart {
                        consumed += 1
                        if escaped {
                            text.append(character)
                            escaped = false
                        } else if character == "\\" {
                            escaped = true
                        } else if character == "\"" {
                            break
                        } else {
                            text.append(character)
                        }
                    }
                    parameterValue = text
                    input = valuePart.dropFirst(consumed)
                } else {
                    let token = valuePart.prefix { $0 != "," && $0 != " " }
                    parameterValue = String(token)
                    input = valuePart.dropFirst(token.count)
                }
                challenge.parameters[name.lowercased()] = parameterValue
            }
            challenges.append(challenge)
        }
        return challenges
    }

    /// The token68 that follows a scheme (`Negotiate YIIabc==`), consumed from `input`;
    /// `nil`, consuming nothing, when parameters or another challenge follow instead.
    ///
    /// A token68 is one space-separated word with no `=` but its trailing padding, and
    /// it ends the challenge: what follows is the end or a comma.
    private static func token68(after input: inout Substring) -> String? {
        let rest = input.drop { $0 == " " }
        guard rest.startIndex != input.startIndex, let first = rest.first, first != ",", first != "=" else {
            return nil
        }
        let word = rest.prefix { !$0.isWhitespace && $0 != "," }
        guard !word.drop(while: { $0 != "=" }).contains(where: { $0 != "=" }) else { return nil }
        let after = rest.dropFirst(word.count)
        guard after.drop(while: { $0 == " " }).first.map({ $0 == "," }) ?? true else { return nil }
        input = after
        return String(word)
    }
}

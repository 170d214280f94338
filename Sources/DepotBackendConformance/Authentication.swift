import Depot
import Foundation
import Testing

extension NetworkConformance {
    /// Bearer and basic credentials, as httpbin checks them: sent, refused with their
    /// challenge, and refreshed once for twenty requests in flight.
    public static let authentication: [ConformanceCheck] = [
        ConformanceCheck("auth: sends a bearer token") { subject in
            let backend = subject.backend(
                try #require(LiveServer.httpbin), headers: ["Authorization": "Bearer t0ken"])
            let json = try await backend.send(BackendRequest(path: "bearer")).value.conformanceJSON()
            #expect(json["authenticated"] == .bool(true))
            #expect(json["token"] == .string("t0ken"))
        },
        ConformanceCheck("auth: a missing bearer token is unauthorized with its challenge") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let result = await backend.send(BackendRequest(path: "bearer")).result
            guard case .unauthorized(_, let challenges) = result.failure else {
                Issue.record("\(subject): expected .unauthorized, got \(result)")
                return
            }
            #expect(challenges.first?.scheme == "Bearer")
        },
        ConformanceCheck("auth: one refresh for twenty requests in flight, each succeeds") { subject in
            let session = SignedOutSession(issuing: "first-t0ken")
            let backend = subject.backend(try #require(LiveServer.httpbin), timeout: 30).with(
                session.middleware)
            let results = await sendConcurrently(20, through: backend, within: 30) { _ in
                BackendRequest(path: "bearer")
            }
            #expect(results.count == 20)
            for result in results {
                let json = try result.get().conformanceJSON()
                #expect(json["authenticated"] == .bool(true))
                #expect(json["token"] == .string("first-t0ken"))
            }
            #expect(await session.refreshes == [nil])
        },
        ConformanceCheck("auth: sends basic credentials") { subject in
            let credentials = Data("ada:s3cret:with:colons".utf8).base64EncodedString()
            let request = BackendRequest(
                segments: ["basic-auth", "ada", "s3cret:with:colons"],
                headers: ["Authorization": "Basic \(credentials)"])
            let json = try await subject.backend(try #require(LiveServer.httpbin)).send(request).value
                .conformanceJSON()
            #expect(json["authenticated"] == .bool(true))
            #expect(json["user"] == .string("ada"))
        },
        ConformanceCheck("auth: wrong basic credentials are unauthorized with the realm") { subject in
            let credentials = Data("ada:wrong".utf8).base64EncodedString()
            let request = BackendRequest(
                segments: ["basic-auth", "ada", "right"], headers: ["Authorization": "Basic \(credentials)"])
            let result = await subject.backend(try #require(LiveServer.httpbin)).send(request).result
            guard case .unauthorized(_, let challenges) = result.failure else {
                Issue.record("\(subject): expected .unauthorized, got \(result)")
                return
            }
            #expect(challenges.first?.scheme == "Basic")
            #expect(challenges.first?.realm == "Fake Realm")
        },
    ]
}

import Testing

@testable import Depot

@Suite("AuthenticationChallenge.parse")
struct AuthenticationChallengeTests {
    @Test func basicWithAQuotedRealm() {
        #expect(
            AuthenticationChallenge.parse(#"Basic realm="Fake Realm""#) == [
                AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "Fake Realm"])
            ])
        #expect(AuthenticationChallenge.parse(#"Basic realm="Fake Realm""#).first?.realm == "Fake Realm")
    }

    @Test func bearerWithErrorParameters() {
        let challenges = AuthenticationChallenge.parse(
            #"Bearer realm="api", error="invalid_token", error_description="expired""#)
        #expect(
            challenges == [
                AuthenticationChallenge(
                    scheme: "Bearer",
                    parameters: ["realm": "api", "error": "invalid_token", "error_description": "expired"])
            ])
    }

    @Test func severalChallengesInOneHeaderAsInRFC9110() {
        let challenges = AuthenticationChallenge.parse(
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#)
        #expect(
            challenges == [
                AuthenticationChallenge(
                    scheme: "Newauth",
                    parameters: ["realm": "apps", "type": "1", "title": #"Login to "apps""#]),
                AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "simple"]),
            ])
    }

    @Test func parameterNamesAreLowercasedAndSpacesAroundEqualsAllowed() {
        #expect(
            AuthenticationChallenge.parse(#"Digest Realm = "x", QOP=auth"#) == [
                AuthenticationChallenge(scheme: "Digest", parameters: ["realm": "x", "qop": "auth"])
            ])
    }

    @Test func schemesWithoutParameters() {
        #expect(
            AuthenticationChallenge.parse(#"Bearer, Basic realm="r""#) == [
                AuthenticationChallenge(scheme: "Bearer"),
                AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "r"]),
            ])
        #expect(AuthenticationChallenge.parse("Negotiate") == [AuthenticationChallenge(scheme: "Negotiate")])
    }

    @Test(arguments: ["YIIBhAYGKwYBBQUCoIIBeDCCAXSgMDAuBgkqhkiC9xIBAgIG", "abc=", "abc==", "a.b-c~d+e/f=="])
    func token68(token: String) {
        #expect(
            AuthenticationChallenge.parse("Negotiate \(token)") == [
                AuthenticationChallenge(scheme: "Negotiate", token: token)
            ])
        #expect(
            AuthenticationChallenge.parse(#"Negotiate \#(token), Basic realm="r""#) == [
                AuthenticationChallenge(scheme: "Negotiate", token: token),
                AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "r"]),
            ])
    }

    @Test func emptyOrUnreadableValues() {
        #expect(AuthenticationChallenge.parse("").isEmpty)
        #expect(AuthenticationChallenge.parse("  ,  ").isEmpty)
        #expect(AuthenticationChallenge.parse("=oops").isEmpty)
    }
}

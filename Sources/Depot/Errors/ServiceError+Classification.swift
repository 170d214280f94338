import Foundation

extension ServiceError {
    /// Classifies a response: `nil` when it is a success, the matching error otherwise.
    ///
    /// This is the one place statuses become errors; every backend calls it, so the
    /// network and the in-memory backend fail alike. A success is any 2xx, and a 304
    /// when `request` was conditional (``BackendRequest/isConditional``).
    public init?(response: BackendResponse, for request: BackendRequest) {
        let status = response.status
        if (200..<300).contains(status) || (status == 304 && request.isConditional) {
            return nil
        }
        let failure = FailureResponse(status: status, headers: response.headers, body: response.body)
        switch status {
        case 401:
            let challenges = response.headers.values(for: "WWW-Authenticate")
                .flatMap(AuthenticationChallenge.parse)
            self = .unauthorized(failure, challenges: challenges)
        case 403: self = .forbidden(failure)
        case 404, 410: self = .notFound(failure)
        case 409: self = .conflict(failure)
        case 429, 503:
            self = .serviceUnavailable(failure, retryAfter: RetryAfter.seconds(in: response.headers))
        case 400..<500: self = .clientError(failure)
        case 500..<600: self = .serverError(failure)
        default: self = .unexpectedStatus(failure)
        }
    }

    /// The response as a `Result`: a success, or the error it classifies as.
    public static func check(_ response: BackendResponse, for request: BackendRequest) -> Result<
        BackendResponse, ServiceError
    > {
        if let error = ServiceError(response: response, for: request) { return .failure(error) }
        return .success(response)
    }
}

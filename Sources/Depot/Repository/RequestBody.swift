import Foundation

/// The body of a request a repository sends: JSON by default, a URL-encoded form,
/// multipart form data, or raw bytes.
///
/// ```swift
/// repository.request(.post, ["oauth", "token"], body: .form([
///     ("grant_type", "password"), ("scope", "read"), ("scope", "write"),
/// ]))
/// ```
public struct RequestBody: Sendable {
    private enum Content: Sendable {
        case none
        case json(@Sendable (JSONCoding) throws(ServiceError) -> Data)
        case raw(Data, contentType: String)
        case file(URL, contentType: String)
        case multipart(MultipartForm)
    }

    private let content: Content

    private init(_ content: Content) {
        self.content = content
    }

    /// No body.
    public static let none = RequestBody(.none)

    /// `value` encoded with the repository's ``JSONCoding`` (`application/json`).
    public static func json<Value: Encodable & Sendable>(_ value: Value) -> RequestBody {
        RequestBody(.json { coding throws(ServiceError) in try coding.encode(value) })
    }

    /// Bytes sent as they are, with their media type.
    public static func data(_ data: Data, contentType: String) -> RequestBody {
        RequestBody(.raw(data, contentType: contentType))
    }

    /// The bytes of the file at `url`, streamed from disk as they are sent (never held
    /// whole in memory), with their media type: an upload. A retry sends the file again
    /// from the start.
    ///
    /// ```swift
    /// photos.send(.put, ["photos", "7", "original"], body: .file(jpegURL, contentType: "image/jpeg"),
    ///             progress: progress)
    /// ```
    public static func file(_ url: URL, contentType: String = "application/octet-stream") -> RequestBody {
        RequestBody(.file(url, contentType: contentType))
    }

    /// `application/x-www-form-urlencoded` fields, in order; repeat a name for an
    /// array (`scope=read&scope=write`), as HTML forms and OAuth token endpoints expect.
    public static func form(_ fields: [(String, String)]) -> RequestBody {
        let encoded = fields.map { FormEncoding.encode($0.0) + "=" + FormEncoding.encode($0.1) }
            .joined(separator: "&")
        return .data(Data(encoded.utf8), contentType: "application/x-www-form-urlencoded")
    }

    /// `multipart/form-data`, for file uploads. A form with parts read from files is
    /// streamed from disk (see ``MultipartForm``).
    public static func multipart(_ form: MultipartForm) -> RequestBody {
        RequestBody(.multipart(form))
    }

    /// The bytes and their `Content-Type`, or `nil` for no body; a file, or a form's file
    /// parts, read whole into memory (sending the body through a repository streams
    /// them instead).
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when a JSON value cannot be encoded
    ///   or a file cannot be read.
    public func encoded(with coding: JSONCoding) throws(ServiceError) -> (data: Data, contentType: String)? {
        switch content {
        case .none: return nil
        case .json(let encode): return (try encode(coding), "application/json")
        case .raw(let data, let contentType): return (data, contentType)
        case .file(let url, let contentType):
            do {
                return (try Data(contentsOf: url), contentType)
            } catch {
                throw .invalidRequest(
                    "the body file \(url.path) cannot be read: \(error.localizedDescription)")
            }
        case .multipart(let form): return (try form.encoded(), form.contentType)
        }
    }

    /// Sends `request` with this body through `backend`: bytes in memory as
    /// ``BackendRequest/body``, a file as ``BackendRequest/bodyFile``, and a form with file
    /// parts written to a temporary file first (off the caller's thread), which is
    /// removed when the call ends. The body's `Content-Type` is set unless the request
    /// names one. The one way repositories and hypermedia clients attach a body.
    @usableFromInline
    func send(
        _ request: BackendRequest, coding: JSONCoding, through backend: any Backend
    ) -> Future<BackendResponse, ServiceError> {
        var request = request
        switch content {
        case .file(let url, let contentType):
            request.bodyFile = url
            request.setContentType(contentType)
        case .multipart(let form) where form.hasFileParts:
            request.setContentType(form.contentType)
            return Self.sendStreaming(form, in: request, through: backend)
        default:
            do {
                if let (data, contentType) = try encoded(with: coding) {
                    request.body = data
                    request.setContentType(contentType)
                }
            } catch {
                return .failure(error)
            }
        }
        return backend.send(request)
    }

    /// Writes `form` to a temporary file on a background queue (in
    /// ``MultipartTemporaries/shared``), sends `request` with it as the body file, and
    /// removes the file when the call ends.
    private static func sendStreaming(
        _ form: MultipartForm, in request: BackendRequest, through backend: any Backend
    ) -> Future<BackendResponse, ServiceError> {
        Future { completion in
            let token = CancellationToken()
            DispatchQueue.global().async {
                guard !token.isCancelled else { return completion(.failure(.cancelled)) }
                let file: URL
                do throws(ServiceError) {
                    file = try MultipartTemporaries.shared.newFile()
                } catch {
                    return completion(.failure(error))
                }
                do throws(ServiceError) {
                    _ = try form.write(to: file)
                } catch {
                    try? PrivateFile.remove(file)
                    return completion(.failure(error))
                }
                guard !token.isCancelled else {
                    try? PrivateFile.remove(file)
                    return completion(.failure(.cancelled))
                }
                var request = request
                request.bodyFile = file
                let sending = backend.send(request).start { result in
                    try? PrivateFile.remove(file)
                    completion(result)
                }
                token.onCancel { sending.cancel() }
            }
            return token
        }
    }
}

extension BackendRequest {
    /// Sets `Content-Type` to `type` unless the request names one already.
    fileprivate mutating func setContentType(_ type: String) {
        if !headers.contains("Content-Type") { headers["Content-Type"] = type }
    }
}

/// `application/x-www-form-urlencoded` escaping (WHATWG URL, "urlencoded serializer").
enum FormEncoding {
    private static let allowed = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._ ")

    static func encode(_ text: String) -> String {
        (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(
            of: " ", with: "+")
    }
}

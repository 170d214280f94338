import Foundation

/// A `multipart/form-data` body (RFC 7578), sent with ``RequestBody/multipart(_:)``: text
/// fields, and files from memory or from disk.
///
/// ```swift
/// var form = MultipartForm()
/// form.append("title", "Holiday")
/// form.append("video", fileAt: videoURL, contentType: "video/mp4")
/// photos.request(.post, ["photos"], body: .multipart(form), progress: progress)
/// ```
///
/// How file parts are streamed from disk: the article *Transfers*.
public struct MultipartForm: Sendable {
    private struct Part: Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var content: Content
    }

    private enum Content: Sendable {
        case data(Data)
        case file(URL)
    }

    /// The slice a file part is copied in.
    private static let sliceSize = 1 << 20

    /// The boundary between parts; random unless given.
    public let boundary: String
    private var parts: [Part] = []

    /// Creates an empty form.
    public init(boundary: String = "depot-" + UUID().uuidString) {
        self.boundary = boundary
    }

    /// The `Content-Type` to send, with the boundary.
    public var contentType: String {
        "multipart/form-data; boundary=\(boundary)"
    }

    /// Whether a part is read from a file when the form is sent.
    var hasFileParts: Bool {
        parts.contains {
            if case .file = $0.content { return true }
            return false
        }
    }

    /// Adds a text field.
    public mutating func append(_ name: String, _ value: String) {
        parts.append(Part(name: name, content: .data(Data(value.utf8))))
    }

    /// Adds a file held in memory.
    public mutating func append(
        _ name: String, file: Data, filename: String, contentType: String = "application/octet-stream"
    ) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, content: .data(file)))
    }

    /// Adds the file at `url`, read when the form is sent (streamed, never held whole);
    /// `filename` defaults to the file's own name.
    public mutating func append(
        _ name: String, fileAt url: URL, filename: String? = nil,
        contentType: String = "application/octet-stream"
    ) {
        parts.append(
            Part(
                name: name, filename: filename ?? url.lastPathComponent, contentType: contentType,
                content: .file(url)))
    }

    /// The encoded body, in memory (file parts read whole).
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when a file part cannot be read.
    public func encoded() throws(ServiceError) -> Data {
        var body = Data()
        try encode { slice in body.append(slice) }
        return body
    }

    /// Writes the encoded body to a new file at `url` (replacing a file there), part by part,
    /// file parts copied in slices of a megabyte; returns its size. The file is readable and
    /// writable by the user only (`0600`: the form may hold private files), and a symbolic
    /// link at `url` is refused, never written through.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when a file part cannot be read or
    ///   `url` cannot be written.
    public func write(to url: URL) throws(ServiceError) -> Int64 {
        let output: FileHandle
        do {
            try PrivateFile.remove(url)
            output = try PrivateFile.create(url)
        } catch {
            throw .invalidRequest("cannot create the multipart body file \(url.path): \(error.reason)")
        }
        defer { try? output.close() }
        var size: Int64 = 0
        var failure: (any Error)?
        try encode { slice in
            guard failure == nil else { return }
            do {
                try output.write(contentsOf: slice)
                size += Int64(slice.count)
            } catch {
                failure = error
            }
        }
        if let failure {
            throw .invalidRequest(
                "cannot write the multipart body file \(url.path): \(failure.localizedDescription)")
        }
        return size
    }

    /// Hands the encoded body to `sink` in order, in slices.
    private func encode(into sink: (Data) -> Void) throws(ServiceError) {
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quote(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(Self.quote(filename))\"" }
            head += "\r\n"
            if let type = part.contentType { head += "Content-Type: \(type)\r\n" }
            sink(Data((head + "\r\n").utf8))
            switch part.content {
            case .data(let data): sink(data)
            case .file(let url): try Self.copy(url, into: sink)
            }
            sink(Data("\r\n".utf8))
        }
        sink(Data("--\(boundary)--\r\n".utf8))
    }

    /// Hands the file at `url` to `sink` in slices.
    private static func copy(_ url: URL, into sink: (Data) -> Void) throws(ServiceError) {
        let input: FileHandle
        do {
            input = try FileHandle(forReadingFrom: url)
        } catch {
            throw .invalidRequest("the form's file \(url.path) cannot be read: \(error.localizedDescription)")
        }
        defer { try? input.close() }
        while true {
            let slice: Data?
            do {
                slice = try input.read(upToCount: sliceSize)
            } catch {
                throw .invalidRequest(
                    "the form's file \(url.path) cannot be read: \(error.localizedDescription)")
            }
            guard let slice, !slice.isEmpty else { return }
            sink(slice)
        }
    }

    /// Escapes a name for a quoted parameter: quotes and line breaks are percent-encoded,
    /// as browsers do (HTML's form submission algorithm).
    private static func quote(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}

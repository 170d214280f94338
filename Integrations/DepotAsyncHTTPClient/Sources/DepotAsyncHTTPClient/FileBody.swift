import AsyncHTTPClient
import Depot
import Foundation
import NIOCore

/// A ``Depot/BackendRequest/bodyFile`` streamed to AsyncHTTPClient slice by slice,
/// never read whole; each send (a `307` or `308` resends it) reads the file again.
enum FileBody {
    /// The size of one slice read from the file.
    static let sliceSize = 1 << 16

    /// The body that streams `file`, with its size as `Content-Length`.
    ///
    /// - Throws: ``Depot/ServiceError/invalidRequest(_:)`` when the file cannot be read.
    static func body(streaming file: URL, on eventLoop: any EventLoop) throws(ServiceError) -> HTTPClient.Body
    {
        let size = try BackendRequest.size(ofBodyFile: file)
        return .stream(contentLength: size) { writer in
            let handle: FileHandle
            do {
                handle = try FileHandle(forReadingFrom: file)
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
            return pump(handle, to: writer, on: eventLoop)
        }
    }

    /// Writes the rest of `handle` to `writer`, one slice after the other, then closes it.
    private static func pump(
        _ handle: FileHandle, to writer: HTTPClient.Body.StreamWriter, on eventLoop: any EventLoop
    )
        -> EventLoopFuture<Void>
    {
        let slice: Data
        do {
            slice = try handle.read(upToCount: sliceSize) ?? Data()
        } catch {
            try? handle.close()
            return eventLoop.makeFailedFuture(error)
        }
        guard !slice.isEmpty else {
            try? handle.close()
            return eventLoop.makeSucceededVoidFuture()
        }
        return writer.write(.byteBuffer(ByteBuffer(bytes: slice))).flatMap {
            pump(handle, to: writer, on: eventLoop)
        }
    }
}

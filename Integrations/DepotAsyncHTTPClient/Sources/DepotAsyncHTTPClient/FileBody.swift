import AsyncHTTPClient
@_spi(BackendSupport) import Depot
import Foundation
import NIOCore

/// A ``Depot/BackendRequest/bodyFile`` streamed to AsyncHTTPClient slice by slice,
/// never read whole; each send (a `307` or `308` resends it) reads the file again. The
/// file is opened, read and closed on ``FileWork``'s thread pool, never on an event loop,
/// and the next slice is read once the client took the last one.
enum FileBody {
    /// The size of one slice read from the file.
    static let sliceSize = 1 << 16

    /// The body that streams `file`, with `size` (its size, measured beforehand) as
    /// `Content-Length`; its file work runs on `files`.
    static func body(streaming file: URL, size: Int64, files: FileWork, on eventLoop: any EventLoop)
        -> HTTPClient.Body
    {
        .stream(contentLength: size) { writer in
            files.run(on: eventLoop) { try FileHandle(forReadingFrom: file) }
                .flatMap { handle in
                    let close: @Sendable () -> EventLoopFuture<Void> = {
                        files.run(on: eventLoop) { try handle.close() }.recover { _ in }
                    }
                    return pump(handle, to: writer, files: files, on: eventLoop)
                        .flatMap(close)
                        .flatMapError { error in close().flatMapThrowing { _ in throw error } }
                }
        }
    }

    /// Writes the rest of `handle` to `writer`, one slice after the other.
    private static func pump(
        _ handle: FileHandle, to writer: HTTPClient.Body.StreamWriter, files: FileWork,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<Void> {
        files.run(on: eventLoop) { ByteBuffer(bytes: try handle.read(upToCount: sliceSize) ?? Data()) }
            .flatMap { slice in
                guard slice.readableBytes > 0 else { return eventLoop.makeSucceededVoidFuture() }
                return writer.write(.byteBuffer(slice)).flatMap {
                    pump(handle, to: writer, files: files, on: eventLoop)
                }
            }
    }
}

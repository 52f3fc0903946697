//! Strict JSONL framing for RPC mode: records end at `\n` and nowhere else. A trailing
//! `\r` is dropped (clients on Windows send `\r\n`), and U+2028 / U+2029 — line
//! separators to some readers, ordinary characters inside JSON strings — are left alone.
//!
//! Output goes through one writer thread, so a line is always written whole: responses and
//! events produced on different tasks can never interleave mid-line, and a slow client
//! never blocks the agent (lines queue in memory, as they do in pi's Node process).

use std::io::{self, Write};
use std::sync::mpsc;
use std::thread::JoinHandle;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Reads LF-terminated records from an async byte stream.
pub struct LineReader<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(input: R) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, input),
            buf: Vec::new(),
        }
    }

    /// The next record without its terminator (an unterminated last record counts);
    /// `None` at the end of the input. Invalid UTF-8 becomes U+FFFD, as in pi.
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        self.buf.clear();
        if self.reader.read_until(b'\n', &mut self.buf).await? == 0 {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(match std::str::from_utf8(&self.buf) {
            Ok(s) => s.to_string(),
            Err(_) => String::from_utf8_lossy(&self.buf).into_owned(),
        }))
    }
}

/// The process's stdin as an async byte stream, read by a dedicated thread.
///
/// `tokio::io::stdin` hands every read to the blocking pool and back, two thread hops per
/// command; a thread parked in `read` costs one. (Making stdin non-blocking instead would
/// change the file description the client shares with us.)
pub struct StdinReader {
    chunks: tokio::sync::mpsc::UnboundedReceiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
}

impl StdinReader {
    /// Starts the reading thread. It ends at end of input, on a read error, or when the
    /// reader is dropped and more input arrives.
    pub fn spawn() -> io::Result<StdinReader> {
        let (tx, chunks) = tokio::sync::mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("rpc-stdin".into())
            .spawn(move || {
                use std::io::Read;
                let mut stdin = io::stdin().lock();
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let chunk = match stdin.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => Ok(buf[..n].to_vec()),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let failed = chunk.is_err();
                    if tx.send(chunk).is_err() || failed {
                        break;
                    }
                }
            })?;
        Ok(StdinReader {
            chunks,
            current: Vec::new(),
            pos: 0,
        })
    }
}

impl AsyncRead for StdinReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.pos == this.current.len() {
            match this.chunks.poll_recv(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.current = chunk;
                    this.pos = 0;
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                // End of input: a read of zero bytes.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = buf.remaining().min(this.current.len() - this.pos);
        buf.put_slice(&this.current[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// What the writer thread is asked to do.
pub enum WriterMsg {
    /// Write this record (without its `\n`).
    Line(String),
    /// Flush, then signal.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Starts the writer thread. It ends when every sender is dropped. After a write error
/// (the client closed its end) later lines are dropped: there is nobody to read them.
pub fn spawn_writer<W: Write + Send + 'static>(
    out: W,
) -> io::Result<(mpsc::Sender<WriterMsg>, JoinHandle<()>)> {
    let (tx, rx) = mpsc::channel::<WriterMsg>();
    let handle = std::thread::Builder::new()
        .name("rpc-stdout".into())
        .spawn(move || write_loop(out, rx))?;
    Ok((tx, handle))
}

fn write_loop<W: Write>(out: W, rx: mpsc::Receiver<WriterMsg>) {
    let mut out = io::BufWriter::with_capacity(64 * 1024, out);
    let mut broken = false;
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        // Write everything already queued, then flush once.
        while let Some(msg) = next {
            match msg {
                WriterMsg::Line(line) => {
                    if !broken {
                        broken = out
                            .write_all(line.as_bytes())
                            .and_then(|()| out.write_all(b"\n"))
                            .is_err();
                    }
                }
                WriterMsg::Flush(done) => {
                    if !broken {
                        broken = out.flush().is_err();
                    }
                    let _ = done.send(());
                }
            }
            next = rx.try_recv().ok();
        }
        if !broken {
            broken = out.flush().is_err();
        }
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &'static [u8]) -> Vec<String> {
        let mut reader = LineReader::new(input);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            lines.push(line);
        }
        lines
    }

    #[tokio::test]
    async fn records_split_on_lf_only_with_crlf_tolerated() {
        let input = "{\"a\":\"x\u{2028}y\u{2029}z\"}\r\n\n{\"b\":1}\r\r\n{\"c\":2}".as_bytes();
        assert_eq!(
            read_all(input).await,
            [
                "{\"a\":\"x\u{2028}y\u{2029}z\"}",
                "",
                "{\"b\":1}\r",
                "{\"c\":2}"
            ]
        );
    }

    #[tokio::test]
    async fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(read_all(b"ab\xffcd\n").await, ["ab\u{fffd}cd"]);
    }

    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn the_writer_appends_a_newline_to_each_record_and_flushes_on_request() {
        let sink = Shared::default();
        let (tx, handle) = spawn_writer(sink.clone()).unwrap();
        tx.send(WriterMsg::Line("{\"n\":1}".into())).unwrap();
        tx.send(WriterMsg::Line("{\"s\":\"a\u{2028}b\"}".into()))
            .unwrap();
        let (done, flushed) = tokio::sync::oneshot::channel();
        tx.send(WriterMsg::Flush(done)).unwrap();
        flushed.await.unwrap();
        assert_eq!(
            String::from_utf8(sink.0.lock().unwrap().clone()).unwrap(),
            "{\"n\":1}\n{\"s\":\"a\u{2028}b\"}\n"
        );
        drop(tx);
        handle.join().unwrap();
    }

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[tokio::test]
    async fn a_closed_output_does_not_stop_the_writer_from_answering_flushes() {
        let (tx, handle) = spawn_writer(Closed).unwrap();
        tx.send(WriterMsg::Line("x".repeat(100_000))).unwrap();
        let (done, flushed) = tokio::sync::oneshot::channel();
        tx.send(WriterMsg::Flush(done)).unwrap();
        flushed.await.unwrap();
        drop(tx);
        handle.join().unwrap();
    }
}

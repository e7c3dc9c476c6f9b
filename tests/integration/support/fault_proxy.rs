//! A TCP proxy between the clients and a server that cuts connections at
//! random moments: with some chance for each chunk of bytes, once a
//! connection is past its handshake, it closes both sides instead of
//! passing the chunk on. A chunk from the server may be the answer to a
//! statement that committed: the client then loses an answer the server
//! sent. A chunk from the client may be a statement the server then never
//! reads. The proxy counts both kinds of cut.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

/// Chunks each way that pass uncut at the start of a connection: the
/// handshake and the login (server greeting, login request, its answer,
/// and the driver's first queries).
const HANDSHAKE_CHUNKS: u32 = 4;

/// The cuts made so far.
#[derive(Debug, Default)]
pub struct Cuts {
    /// A server's chunk, an answer, that never reached its client.
    pub answers_lost: AtomicU64,
    /// A client's chunk, a statement, that never reached the server.
    pub statements_lost: AtomicU64,
    /// Chunks passed on, both ways.
    pub chunks: AtomicU64,
}

pub struct FaultProxy {
    pub port: u16,
    pub cuts: Arc<Cuts>,
    cutting: Arc<AtomicBool>,
}

impl FaultProxy {
    /// A proxy to the server at `(host, port)` that cuts each chunk past
    /// the handshake with chance `chance`.
    pub fn start((host, server_port): (String, u16), chance: f64) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let cuts = Arc::new(Cuts::default());
        let cutting = Arc::new(AtomicBool::new(true));
        let (accepted_cuts, accepted_cutting) = (Arc::clone(&cuts), Arc::clone(&cutting));
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect((host.as_str(), server_port)) else { continue };
                let connection = Connection { client, server, chance, cuts: Arc::clone(&accepted_cuts) };
                connection.pump(Arc::clone(&accepted_cutting));
            }
        });
        FaultProxy { port, cuts, cutting }
    }

    /// Stops cutting: a test reads its totals through the proxy after the load.
    pub fn stop_cutting(&self) {
        self.cutting.store(false, Ordering::Relaxed);
    }

    /// `mysql://user:password@127.0.0.1:<proxy port>/database`, from a
    /// server URL of the same form.
    pub fn url(&self, server_url: &str) -> String {
        let (head, tail) = server_url.rsplit_once('@').expect("a URL with an account");
        let (_, database) = tail.split_once('/').expect("a URL with a database");
        format!("{head}@127.0.0.1:{}/{database}", self.port)
    }

    /// A pool through the proxy that opens no connection before a call
    /// asks for one: the default opens ten when it is made, which a cut
    /// would fail outright.
    pub fn pool(&self, server_url: &str) -> mysql::Pool {
        let opts = mysql::Opts::from_url(&self.url(server_url)).expect("a URL made by the tests");
        let constraints = mysql::PoolConstraints::new(0, 100).expect("min <= max");
        mysql::Pool::new(
            mysql::OptsBuilder::from_opts(opts)
                .pool_opts(mysql::PoolOpts::default().with_constraints(constraints)),
        )
        .expect("a pool opens no connection up front")
    }

    pub fn summary(&self) -> String {
        format!(
            "{} answers lost, {} statements lost, {} chunks passed",
            self.cuts.answers_lost.load(Ordering::Relaxed),
            self.cuts.statements_lost.load(Ordering::Relaxed),
            self.cuts.chunks.load(Ordering::Relaxed)
        )
    }
}

struct Connection {
    client: TcpStream,
    server: TcpStream,
    chance: f64,
    cuts: Arc<Cuts>,
}

impl Connection {
    /// Copies each way on a thread of its own until either side closes or
    /// a cut closes both.
    fn pump(self, cutting: Arc<AtomicBool>) {
        let directions = [
            (self.client.try_clone(), self.server.try_clone(), false),
            (self.server.try_clone(), self.client.try_clone(), true),
        ];
        for (from, to, answers) in directions {
            let (Ok(mut from), Ok(mut to)) = (from, to) else { return };
            let (cuts, cutting, chance) = (Arc::clone(&self.cuts), Arc::clone(&cutting), self.chance);
            let (client, server) = (self.client.try_clone(), self.server.try_clone());
            thread::spawn(move || {
                let mut buffer = [0u8; 64 * 1024];
                let mut chunks = 0u32;
                while let Ok(read) = from.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    chunks += 1;
                    if chunks > HANDSHAKE_CHUNKS
                        && cutting.load(Ordering::Relaxed)
                        && rand::random_bool(chance)
                    {
                        let lost = if answers { &cuts.answers_lost } else { &cuts.statements_lost };
                        lost.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    if to.write_all(&buffer[..read]).is_err() {
                        break;
                    }
                    cuts.chunks.fetch_add(1, Ordering::Relaxed);
                }
                for side in [client, server].into_iter().flatten() {
                    let _ = side.shutdown(Shutdown::Both);
                }
            });
        }
    }
}

//! The session's small commands, each answered by one OK (or an error):
//! `COM_PING`, `COM_RESET_CONNECTION`, `COM_INIT_DB`, and `COM_QUIT`,
//! which has no answer. Each OK's status flags become
//! [`Framer::status`](crate::wire::Framer::status).

use std::io::{Read, Write};

use crate::wire::error::WireError;
use crate::wire::packet::Framer;
use crate::wire::parse::{parse_err, OkInfo};

const COM_QUIT: u8 = 0x01;
const COM_INIT_DB: u8 = 0x02;
const COM_PING: u8 = 0x0e;
const COM_RESET_CONNECTION: u8 = 0x1f;

impl<S: Read + Write> Framer<S> {
    /// `COM_PING`: the server answers OK when it is there and the session
    /// is in step.
    pub fn ping(&mut self) -> Result<OkInfo, WireError> {
        self.simple_command(COM_PING, b"", "COM_PING")
    }

    /// `COM_RESET_CONNECTION`: the session as after the login (a
    /// transaction rolled back, variables, temporary tables and prepared
    /// statements gone, autocommit and the other variables back to the
    /// server's defaults), the current database kept. A server without
    /// the command (MySQL before 5.7.3, MariaDB before 10.2.4) answers an
    /// error.
    pub fn reset_connection(&mut self) -> Result<OkInfo, WireError> {
        self.simple_command(COM_RESET_CONNECTION, b"", "COM_RESET_CONNECTION")
    }

    /// `COM_INIT_DB`: makes `database` the current database (what `USE`
    /// does, without a statement to parse).
    pub fn init_db(&mut self, database: &str) -> Result<OkInfo, WireError> {
        self.simple_command(COM_INIT_DB, database.as_bytes(), "COM_INIT_DB")
    }

    /// `COM_QUIT`: asks the server to end the session; it answers nothing
    /// and closes the connection.
    pub fn quit(&mut self) -> Result<(), WireError> {
        self.send_command(COM_QUIT, b"")
    }

    fn simple_command(&mut self, cmd: u8, payload: &[u8], what: &str) -> Result<OkInfo, WireError> {
        self.send_command(cmd, payload)?;
        let caps = self.caps();
        loop {
            self.advance()?;
            let p = self.last_packet();
            return match p.first() {
                Some(0x00) => {
                    let ok = OkInfo::parse(p, caps)?;
                    self.status = ok.status;
                    Ok(ok)
                }
                Some(0xff) => match parse_err(p, caps)? {
                    Some(e) => Err(WireError::Server(e)),
                    // A progress report: the answer is still to come.
                    None => continue,
                },
                Some(&b) => Err(WireError::protocol(format!(
                    "a packet starting with 0x{b:02X} where the OK of {what} belongs"
                ))),
                None => Err(WireError::protocol(format!(
                    "an empty packet where the OK of {what} belongs"
                ))),
            };
        }
    }
}

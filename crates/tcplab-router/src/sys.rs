//! The system calls std does not wrap, each behind a safe function: a TUN device (the
//! `TUNSETIFF` ioctl, `Documentation/networking/tuntap.rst`), an absolute-deadline timer
//! (`timerfd_create(2)` on CLOCK_MONOTONIC with TFD_TIMER_ABSTIME), `poll(2)`, a `signalfd(2)` for
//! SIGINT/SIGTERM/SIGUSR1, and `sched_setscheduler(2)` for SCHED_FIFO.
//!
//! This is the only module allowed `unsafe` (the crate denies it elsewhere): every block is one
//! FFI call on arguments built right beside it, and every file descriptor is owned by a `File`.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt;

use tcplab_sim::time::Nanos;

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the clock the timer's absolute deadlines are read on).
pub fn now_ns() -> Nanos {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds (wall time, as packet captures stamp).
pub fn wall_ns() -> Nanos {
    clock_ns(libc::CLOCK_REALTIME)
}

fn clock_ns(clock: libc::clockid_t) -> Nanos {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; both clocks used here always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A TUN device (layer 3, no packet-information header), non-blocking. It disappears with the
/// process: nothing of it outlives the router.
pub struct Tun {
    file: File,
    pub name: String,
}

impl Tun {
    pub fn open(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("TUN name '{name}' must have 1 to {} characters", libc::IFNAMSIZ - 1)));
        }
        let file = OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open("/dev/net/tun")?;
        // SAFETY: `ifreq` is plain old data; all-zero is a valid value.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
            *dst = src as libc::c_char;
        }
        req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: TUNSETIFF reads and writes one `ifreq`, which `req` is, on an open TUN fd.
        check(unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req) })?;
        Ok(Tun { file, name: name.to_string() })
    }

    pub fn fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// One packet into `buf`; `WouldBlock` when none is waiting.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }

    /// Hand one packet back to the kernel, which forwards it as if it arrived on this device.
    pub fn send(&mut self, packet: &[u8]) -> io::Result<usize> {
        self.file.write(packet)
    }
}

/// A CLOCK_MONOTONIC timerfd armed at absolute deadlines (no drift from relative sleeps).
pub struct Timer {
    file: File,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain syscall; the returned fd is owned by the `File` at once.
        let fd = check(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) })?;
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Timer { file: unsafe { File::from_raw_fd(fd) } })
    }

    pub fn fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// Fire at `deadline_ns` on CLOCK_MONOTONIC (`None` disarms). A deadline already past fires at once.
    pub fn set(&self, deadline_ns: Option<Nanos>) -> io::Result<()> {
        let value = match deadline_ns {
            // A zero it_value disarms: a deadline of 0 is in the past anyway, so fire at 1 ns.
            Some(t) => libc::timespec { tv_sec: (t.max(1) / 1_000_000_000) as libc::time_t, tv_nsec: (t.max(1) % 1_000_000_000) as libc::c_long },
            None => libc::timespec { tv_sec: 0, tv_nsec: 0 },
        };
        let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
        // SAFETY: `spec` is a valid itimerspec; the old value is not asked for (null).
        check(unsafe { libc::timerfd_settime(self.file.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) })?;
        Ok(())
    }

    /// Clear a pending expiry (non-blocking).
    pub fn clear(&mut self) {
        let mut expirations = [0u8; 8];
        let _ = self.file.read(&mut expirations);
    }
}

/// `poll(2)` on `fds` for readability; returns which are readable. `timeout_ms < 0` waits forever.
pub fn poll_readable<const N: usize>(fds: [i32; N], timeout_ms: i32) -> io::Result<[bool; N]> {
    let mut set = fds.map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
    // SAFETY: `set` is an array of N valid pollfd structures.
    let ret = unsafe { libc::poll(set.as_mut_ptr(), N as libc::nfds_t, timeout_ms) };
    if ret < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok([false; N]);
        }
        return Err(e);
    }
    Ok(set.map(|p| p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0))
}

/// The signals the router answers, as received from a signalfd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT or SIGTERM: stop, report, exit 0.
    Stop,
    /// SIGUSR1: write the report so far.
    Report,
    /// SIGUSR2: the run starts now (the rate schedule's time origin).
    Start,
}

/// SIGINT, SIGTERM, SIGUSR1 and SIGUSR2 blocked in this thread (and every thread it spawns afterwards) and
/// read synchronously from a signalfd instead of interrupting anything.
pub struct Signals {
    file: File,
}

impl Signals {
    pub fn block() -> io::Result<Signals> {
        // SAFETY: `set` is initialised by sigemptyset before use; all calls take valid pointers.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGUSR1, libc::SIGUSR2] {
                libc::sigaddset(&mut set, sig);
            }
            let ret = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if ret != 0 {
                return Err(io::Error::from_raw_os_error(ret));
            }
            let fd = check(libc::signalfd(-1, &set, libc::SFD_CLOEXEC))?;
            Ok(Signals { file: File::from_raw_fd(fd) })
        }
    }

    /// Wait up to `timeout_ms` for a signal.
    pub fn wait(&mut self, timeout_ms: i32) -> io::Result<Option<Signal>> {
        let [ready] = poll_readable([self.file.as_raw_fd()], timeout_ms)?;
        if !ready {
            return Ok(None);
        }
        let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
        self.file.read_exact(&mut info)?;
        // ssi_signo is the first u32 of signalfd_siginfo.
        let signo = u32::from_ne_bytes([info[0], info[1], info[2], info[3]]) as i32;
        Ok(Some(match signo {
            libc::SIGUSR1 => Signal::Report,
            libc::SIGUSR2 => Signal::Start,
            _ => Signal::Stop,
        }))
    }
}

/// Put the calling thread under SCHED_FIFO at `priority`; `Err` when not permitted.
pub fn set_fifo(priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 is the calling thread; `param` is valid.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// Lock the process's memory (current and future) so that no page of the slab or the stacks is
/// swapped out or faulted in while packets wait; `Err` when not permitted.
pub fn lock_memory() -> io::Result<()> {
    // SAFETY: plain syscall with flag arguments.
    check(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) })?;
    Ok(())
}

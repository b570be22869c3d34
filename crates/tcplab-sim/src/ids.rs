//! Typed ids: small integers that address the arenas (`Vec`s) the world lives in.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A node (host or router).
    NodeId
);
id_type!(
    /// A one-way link.
    LinkId
);
id_type!(
    /// A flow (a TCP connection or a CBR stream), numbered in scenario order.
    FlowId
);

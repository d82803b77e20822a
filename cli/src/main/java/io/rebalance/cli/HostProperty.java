package io.rebalance.cli;

import ch.qos.logback.core.PropertyDefinerBase;

/**
 * The {@code HOST} property of logback.xml: the host's name as logback finds it, with every character a log pattern
 * could read as a conversion word made plain. Where the name does not resolve (a chroot, a container without its
 * name in /etc/hosts) logback falls back to an address such as {@code fd00::2%eth0}, and in the pattern {@code %eth0}
 * was an unknown conversion word: an error at every start.
 */
public final class HostProperty extends PropertyDefinerBase {
    @Override
    public String getPropertyValue() {
        String name = getContext() == null ? null : getContext().getProperty("HOSTNAME");
        return plain(name == null ? System.getenv().getOrDefault("HOSTNAME", "localhost") : name);
    }

    /** Letters, digits, and {@code . - _ :} kept; anything else (a {@code %} first) becomes {@code _}. */
    static String plain(String host) {
        return host.replaceAll("[^A-Za-z0-9._:-]", "_");
    }
}

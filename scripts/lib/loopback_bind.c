/* loopback_bind.c: a bind() that keeps the MiniCluster's servers on the loopback interface.
 *
 * Loaded with LD_PRELOAD into the MiniCluster's JVM and its containers (scripts/minicluster).
 * Some Hadoop servers bind the wildcard address with no setting to change it: the
 * NodeManager's shuffle service (ShuffleHandler binds new InetSocketAddress(port)) and
 * every MapReduce application master's client, task and web servers.  This bind() turns
 * a TCP socket's bind to 0.0.0.0 into one to 127.0.0.1, and to :: into one to
 * ::ffff:127.0.0.1 (Java's sockets are dual-stack, so the socket still takes IPv4 loopback
 * connections, the only kind the cluster's clients make: every address it names is
 * 127.0.0.1).  Any other bind, and every other call, is the C library's own.
 *
 *   cc -shared -fPIC -O2 -o libloopback-bind.so loopback_bind.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_function)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *address, socklen_t length) {
    static bind_function real_bind;
    if (real_bind == NULL) {
        real_bind = (bind_function)dlsym(RTLD_NEXT, "bind");
        if (real_bind == NULL) {
            errno = ENOSYS;
            return -1;
        }
    }
    int type = 0;
    socklen_t type_length = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_length) != 0 || type != SOCK_STREAM) {
        return real_bind(fd, address, length);  /* servers only: TCP */
    }
    if (address != NULL && address->sa_family == AF_INET
            && length >= (socklen_t)sizeof(struct sockaddr_in)) {
        struct sockaddr_in in4;
        memcpy(&in4, address, sizeof in4);
        if (in4.sin_addr.s_addr == htonl(INADDR_ANY)) {
            in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            return real_bind(fd, (const struct sockaddr *)&in4, sizeof in4);
        }
    } else if (address != NULL && address->sa_family == AF_INET6
            && length >= (socklen_t)sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, address, sizeof in6);
        if (IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr)) {
            static const unsigned char mapped_loopback[16] =
                {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
            memcpy(&in6.sin6_addr, mapped_loopback, sizeof mapped_loopback);
            return real_bind(fd, (const struct sockaddr *)&in6, sizeof in6);
        }
    }
    return real_bind(fd, address, length);
}

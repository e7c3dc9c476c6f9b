// Calls every routine of the counter package as a Java application does,
// through MariaDB Connector/J, with batches written by Jackson, and prints
// what it saw, one "what: value" line each, for the `languages` tests to
// compare with what the package documents. Run as a single source file:
//   java -cp mariadb-java-client.jar:jackson-*.jar CountersFromJava.java JDBC_URL
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.util.LinkedHashMap;
import java.util.Map;

public class CountersFromJava {
    static final String PLAIN = "downloads";
    static final String WIDE = "名前 😀";
    static final String ESCAPED = "a&b<c>/d\"q\\";

    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0])) {
            for (String name : new String[] {PLAIN, WIDE, ESCAPED}) {
                call(conn, "{call counter_setup(?, ?, ?, ?)}", name, "from Java", 4, null);
            }
            for (int i = 0; i < 3; i++) {
                call(conn, "{call counter_increment(?)}", PLAIN);
            }
            call(conn, "{call counter_add(?, ?)}", PLAIN, 39L);
            // A whole number as a double, as JavaScript sends every number.
            call(conn, "{call counter_add(?, ?)}", PLAIN, 2.0);
            print("after adds", get(conn, PLAIN));

            Map<String, Long> deltas = new LinkedHashMap<>();
            deltas.put(PLAIN, 1L);
            deltas.put(WIDE, 2L);
            deltas.put(ESCAPED, 3L);
            ObjectMapper plain = new ObjectMapper();
            ObjectMapper asciiOnly = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
            for (ObjectMapper mapper : new ObjectMapper[] {plain, asciiOnly}) {
                call(conn, "{call counter_add_many(?)}", mapper.writeValueAsString(deltas));
            }
            print("ascii-only batch", asciiOnly.writeValueAsString(deltas));
            for (String name : new String[] {PLAIN, WIDE, ESCAPED}) {
                print("after batches " + name, get(conn, name));
            }

            print("estimate is a multiple of 4", scalar(conn, "SELECT counter_estimate(?) % 4", PLAIN));
            call(conn, "{call counter_reset(?, ?, ?)}", WIDE, 10L, true);
            print("after reset", get(conn, WIDE));
            call(conn, "{call counter_resize(?, ?)}", PLAIN, 8);
            call(conn, "{call counter_compact(?)}", PLAIN);
            print("after resize and compact", get(conn, PLAIN));
            call(conn, "{call counter_delete(?)}", ESCAPED);
            print("after delete", get(conn, ESCAPED));

            refused(conn, "unknown counter", "{call counter_increment(?)}", "missing");
            refused(conn, "already exists", "{call counter_setup(?, ?, ?, ?)}", PLAIN, "again", null, null);
            refused(conn, "empty name", "{call counter_setup(?, ?, ?, ?)}", "", "d", null, null);
            refused(conn, "fractional delta", "{call counter_add(?, ?)}", PLAIN, 1.5);
            refused(conn, "fractional batch", "{call counter_add_many(?)}", "{\"downloads\": 1.5}");
            refused(conn, "missing routine", "{call counter_missing(?)}", PLAIN);
            call(conn, "{call counter_bound(?, ?, ?)}", PLAIN, 0, null);
            refused(conn, "past the floor", "{call counter_add(?, ?)}", PLAIN, -1000);
            call(conn, "{call counter_bound(?, ?, ?)}", PLAIN, null, null);
            print("after refusals", get(conn, PLAIN));
        }
    }

    static void call(Connection conn, String sql, Object... args) throws SQLException {
        try (CallableStatement statement = conn.prepareCall(sql)) {
            bind(statement, args);
            statement.execute();
        }
    }

    /** How the driver reports a call the server refuses: the numbers, and the exception class a retry layer decides by. */
    static void refused(Connection conn, String what, String sql, Object... args) {
        try {
            call(conn, sql, args);
            print(what, "no error");
        } catch (SQLException error) {
            print(what, error.getErrorCode() + " " + error.getSQLState() + " " + error.getClass().getName()
                    + " transient=" + (error instanceof SQLTransientException));
        }
    }

    static String get(Connection conn, String name) throws SQLException {
        return scalar(conn, "SELECT counter_get(?)", name);
    }

    static String scalar(Connection conn, String sql, Object... args) throws SQLException {
        try (PreparedStatement statement = conn.prepareStatement(sql)) {
            bind(statement, args);
            try (ResultSet row = statement.executeQuery()) {
                row.next();
                return String.valueOf(row.getObject(1));
            }
        }
    }

    static void bind(PreparedStatement statement, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            Object arg = args[i];
            if (arg == null) {
                statement.setNull(i + 1, java.sql.Types.NULL);
            } else if (arg instanceof Double) {
                statement.setDouble(i + 1, (Double) arg);
            } else {
                statement.setObject(i + 1, arg);
            }
        }
    }

    static void print(String what, Object value) {
        System.out.println(what + ": " + value);
    }
}

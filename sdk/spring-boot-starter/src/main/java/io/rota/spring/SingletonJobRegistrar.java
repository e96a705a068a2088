package io.rota.spring;

import io.rota.client.RotaClient;
import io.rota.client.recipes.FireSchedule;
import io.rota.client.recipes.JobContext;
import io.rota.client.recipes.JobListener;
import io.rota.client.recipes.JobTask;
import io.rota.client.recipes.MissedRunPolicy;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Finds the {@link SingletonJob @SingletonJob} methods of every bean as the context creates them (checking
 * each at once, so a bad schedule fails the start with the bean and method named), starts one Rota
 * {@link io.rota.client.recipes.SingletonJob} per method when the context has started, and closes them when
 * it stops (before the {@code RotaClient} bean is closed).
 */
public final class SingletonJobRegistrar implements BeanPostProcessor, SmartLifecycle {

    private static final System.Logger LOG = System.getLogger(SingletonJobRegistrar.class.getName());

    private final ObjectProvider<RotaClient> rota;
    private final ObjectProvider<RotaProperties> properties;
    private final ObjectProvider<JobListener> listeners;
    private final Environment environment;
    private final List<Definition> definitions = new ArrayList<>();
    private final List<io.rota.client.recipes.SingletonJob> running = new ArrayList<>();
    /** Counted down when the jobs stop; a non-daemon thread waits on it while they run (guarded by running). */
    private CountDownLatch keepAlive;

    /** One annotated method, checked: its name, schedule (and how to say it), policy, and how to call it. */
    record Definition(String name, FireSchedule schedule, String when, MissedRunPolicy policy, Object bean,
                      Method method) {
    }

    /**
     * Created by the auto-configuration (a static bean method, as a post-processor must be).
     *
     * @param rota        the client, looked up when the jobs start
     * @param properties  the {@code rota.*} settings, looked up when the jobs start
     * @param listeners   job listeners (metrics), told of every job's runs
     * @param environment resolves {@code ${...}} placeholders in the annotation's values
     */
    public SingletonJobRegistrar(ObjectProvider<RotaClient> rota, ObjectProvider<RotaProperties> properties,
                                 ObjectProvider<JobListener> listeners, Environment environment) {
        this.rota = rota;
        this.properties = properties;
        this.listeners = listeners;
        this.environment = environment;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        Map<Method, SingletonJob> found = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<SingletonJob>) m ->
                        AnnotatedElementUtils.findMergedAnnotation(m, SingletonJob.class));
        for (Map.Entry<Method, SingletonJob> e : found.entrySet()) {
            Method invocable = AopUtils.selectInvocableMethod(e.getKey(), bean.getClass());
            Definition d = define(beanName, bean, invocable, e.getValue());
            synchronized (definitions) {
                for (Definition other : definitions) {
                    if (other.name().equals(d.name())) {
                        throw new IllegalStateException("@SingletonJob name \"" + d.name() + "\" is used twice ("
                                + where(other.method()) + " and " + where(invocable) + "): give each job its own name");
                    }
                }
                definitions.add(d);
            }
        }
        return bean;
    }

    /** Checks one annotated method; every message names it and says what to change. */
    Definition define(String beanName, Object bean, Method method, SingletonJob a) {
        String at = "@SingletonJob on " + where(method) + ": ";
        Class<?>[] params = method.getParameterTypes();
        if (params.length > 1 || params.length == 1 && params[0] != JobContext.class) {
            throw new IllegalStateException(at + "the method takes no parameter or one JobContext");
        }
        String name = resolve(a.name());
        if (name.isEmpty()) {
            name = beanName + "." + method.getName();
        }
        if (name.contains("/")) {
            throw new IllegalStateException(at + "the job's name must not contain '/': " + name);
        }
        String cron = resolve(a.cron());
        String rate = resolve(a.fixedRate());
        String daily = resolve(a.daily());
        int set = (cron.isEmpty() ? 0 : 1) + (rate.isEmpty() ? 0 : 1) + (daily.isEmpty() ? 0 : 1);
        if (set != 1) {
            throw new IllegalStateException(at + "set exactly one of cron, fixedRate, daily (found " + set + ")");
        }
        if (a.missedRunPolicy().length > 1) {
            throw new IllegalStateException(at + "give at most one missedRunPolicy");
        }
        FireSchedule schedule;
        String when;
        try {
            ZoneId zone = ZoneId.of(resolve(a.zone()));
            if (!cron.isEmpty()) {
                schedule = FireSchedule.cron(cron, zone);
                when = "cron \"" + cron + "\" in " + zone;
            } else if (!rate.isEmpty()) {
                Duration period = DurationStyle.detectAndParse(rate);
                schedule = FireSchedule.fixedRate(period);
                when = "every " + period;
            } else {
                LocalTime time = LocalTime.parse(daily);
                schedule = FireSchedule.daily(time, zone);
                when = "daily at " + time + " " + zone;
            }
        } catch (IllegalArgumentException | DateTimeException e) {
            throw new IllegalStateException(at + e.getMessage(), e);
        }
        MissedRunPolicy policy = a.missedRunPolicy().length == 1 ? a.missedRunPolicy()[0] : null;
        ReflectionUtils.makeAccessible(method);
        return new Definition(name, schedule, when, policy, bean, method);
    }

    private String resolve(String value) {
        return environment.resolveRequiredPlaceholders(value).trim();
    }

    private static String where(Method m) {
        return m.getDeclaringClass().getName() + "." + m.getName();
    }

    /** The jobs found so far (for tests and tools). */
    List<Definition> definitions() {
        synchronized (definitions) {
            return List.copyOf(definitions);
        }
    }

    @Override
    public void start() {
        List<Definition> defs = definitions();
        if (defs.isEmpty()) {
            return;
        }
        RotaClient client = rota.getObject();
        RotaProperties p = properties.getObject();
        JobListener listener = JobListeners.of(listeners.orderedStream().toList());
        synchronized (running) {
            for (Definition d : defs) {
                io.rota.client.recipes.SingletonJob job = io.rota.client.recipes.SingletonJob
                        .builder(client, d.name(), d.schedule(), task(d))
                        .instanceId(p.instanceId())
                        .prefix(p.jobs().prefix())
                        .lockTtl(p.jobs().lockTtl())
                        .pollInterval(p.jobs().pollInterval())
                        .missedRunPolicy(d.policy() != null ? d.policy() : p.jobs().missedRunPolicy())
                        .listener(listener)
                        .start();
                running.add(job);
                LOG.log(System.Logger.Level.INFO, "started singleton job " + d.name() + " (" + d.when()
                        + ") on " + p.instanceId() + ": " + where(d.method()) + "; history: rotactl jobs history "
                        + d.name());
            }
            keepAlive = new CountDownLatch(1);
            Thread t = new Thread(this::awaitStop, "rota-singleton-jobs");
            t.setDaemon(false);
            t.start();
        }
    }

    /**
     * Keeps the JVM up while jobs run, as {@code @Scheduled}'s scheduler thread does: a job thread is a daemon
     * (the SDK must never keep an application alive), so an application with no web server would otherwise
     * exit right after it started. Ends when the context stops the jobs.
     */
    private void awaitStop() {
        CountDownLatch latch;
        synchronized (running) {
            latch = keepAlive;
        }
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static JobTask task(Definition d) {
        boolean withContext = d.method().getParameterCount() == 1;
        return ctx -> {
            try {
                if (withContext) {
                    d.method().invoke(d.bean(), ctx);
                } else {
                    d.method().invoke(d.bean());
                }
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception) {
                    throw (Exception) cause;
                }
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw e;
            }
        };
    }

    @Override
    public void stop() {
        synchronized (running) {
            for (io.rota.client.recipes.SingletonJob job : running) {
                job.close();
            }
            running.clear();
            if (keepAlive != null) {
                keepAlive.countDown();
            }
        }
    }

    @Override
    public boolean isRunning() {
        synchronized (running) {
            return !running.isEmpty();
        }
    }

    /**
     * The running jobs, in the order they were started.
     *
     * @return the jobs (empty before start and after stop)
     */
    public List<io.rota.client.recipes.SingletonJob> jobs() {
        synchronized (running) {
            return List.copyOf(running);
        }
    }
}
